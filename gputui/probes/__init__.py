"""GPU and host telemetry (NVML, ROCm/amdgpu sysfs, simulated). Never imports Textual."""
