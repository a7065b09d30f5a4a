  .amdgcn_target "amdgcn-amd-amdhsa--gfx1100"
  .data
  .globl vis
  .p2align 3
vis:
  .quad 42
  .globl ptr
ptr:
  .quad vis
  .quad vis+8
