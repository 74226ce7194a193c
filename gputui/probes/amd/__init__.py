"""AMD GPU backends: ROCm SMI's library (``rocm``), amdgpu's sysfs files read directly (``sysfs``) and the
KFD topology that maps cards to processes (``topology``)."""
