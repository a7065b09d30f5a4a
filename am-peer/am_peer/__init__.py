"""am-peer: tinygrad's AM driver (PyPI tinygrad==0.14.0) driving a virtual GPU.

Modules: discovery (table parse), symbols (register names), trace (recorder),
pcidev (the PCI device AMDev is handed), backend (the C ABI binding),
responder (a Python research responder), firmware (fetch_fw override),
run (the command line). Stdlib and ctypes only; tinygrad is imported, never
copied or edited.
"""
