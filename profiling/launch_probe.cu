// Kernels that do nothing, for profiling/launch_cost.py: what cuLaunchKernel costs the host with no
// parameters, and with one parameter as large as rtscan's (RTSCAN_PARAMETER_BYTES, set by the script).
struct ParameterBlock { char bytes[RTSCAN_PARAMETER_BYTES]; };

template <int Unused> __global__ void no_parameters() {}

template <int Unused> __global__ void one_block_parameter(ParameterBlock block) {
    // Reads the parameter, so that it stays; never true for the script's blocks.
    if (block.bytes[0] == 123 && threadIdx.x == 1023) asm volatile("trap;");
}
