"""Clocks and memory bandwidth from NVML (nvidia-ml-py), for `info` and the bench."""

from __future__ import annotations


def facts(device: int) -> dict:
    """Clocks and memory bandwidth from NVML; {"nvml": "unavailable (why)"} when it cannot answer."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(device)
            memory_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
            bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
            return {
                "sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
                "sm_clock_max_mhz": pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM),
                "memory_clock_mhz": pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_MEM),
                "memory_clock_max_mhz": memory_mhz,
                "memory_bus_bits": bus_bits,
                # double data rate: two transfers per clock on every bit of the bus
                "theoretical_bandwidth_gbs": 2 * memory_mhz * 1e6 * bus_bits / 8 / 1e9,
            }
        finally:
            pynvml.nvmlShutdown()
    except Exception as exc:  # NVML missing or refusing: say so, do not fail `info`
        return {"nvml": f"unavailable ({exc})"}
