"""FlashMLA's SM90 dense MLA decode: the build (``build.py``), our C ABI (``capi.cu``) and its ctypes loader."""
