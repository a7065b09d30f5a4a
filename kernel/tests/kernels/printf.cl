/* printf with a local __printf_alloc; built at -O0 it keeps hidden_printf_buffer. */
__global char *__printf_alloc(uint bytes) { return 0; }
__kernel void p(__global int *o) { printf("x %d\n", o[0]); }
