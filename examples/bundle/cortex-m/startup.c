// Reset and vector table for an Armv7-M / Armv8-M core with an FPU (Cortex-M4F, M7, M33, M55) that runs a bundle
// runner under semihosting: enable the FPU, copy .data from flash, zero .bss, open the semihosting console, take the
// command line from the host (QEMU: -semihosting-config enable=on,arg=runner,arg=...), call main, report its exit
// status to the host (QEMU exits with it).
#include <stdint.h>
#include <stdlib.h>

extern int main(int argc, char **argv);
extern void initialise_monitor_handles(void);

// From the linker script: the stack's top, .data's load address in flash and its place in RAM, .bss.
extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start__, __bss_end__;

// SYS_GET_CMDLINE: the command line the host gives the program, NUL-terminated in `buf`; 0 on success.
static int semihosting_command_line(char *buf, int size) {
  struct { char *buf; int size; } block = {buf, size - 1};
  register int op __asm__("r0") = 0x15;
  register void *arg __asm__("r1") = &block;
  __asm volatile("bkpt #0xab" : "+r"(op) : "r"(arg) : "memory");
  if (op == 0) buf[block.size] = 0;
  return op;
}

void Reset_Handler(void) {
  // CPACR: full access to the coprocessors CP10 and CP11 (the FPU), before any floating-point instruction
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
  __asm volatile("dsb\n isb");
  for (uint32_t *src = &__data_load, *dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (uint32_t *dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0;
  initialise_monitor_handles();
  static char line[1024];
  static char *argv[32];
  int argc = 0;
  if (semihosting_command_line(line, sizeof line) == 0) {
    for (char *p = line; *p && argc < 31;) {
      while (*p == ' ') *p++ = 0;
      if (!*p) break;
      argv[argc++] = p;
      while (*p && *p != ' ') p++;
    }
  }
  if (argc == 0) argv[argc++] = "runner";
  argv[argc] = NULL;
  exit(main(argc, argv));
}

// The C library's constructor and destructor hooks (no crti/crtn objects in this link: nothing to run).
void _init(void) {}
void _fini(void) {}

// A fault ends the run as a failure: SYS_EXIT with ADP_Stopped_RunTimeErrorUnknown (QEMU exits with status 1).
static void Fault_Handler(void) {
  register int op __asm__("r0") = 0x18;
  register int reason __asm__("r1") = 0x20024;
  __asm volatile("bkpt #0xab" : : "r"(op), "r"(reason) : "memory");
  for (;;) {
  }
}

__attribute__((section(".isr_vector"), used)) static const void *const vectors[16] = {
    &__stack_top, Reset_Handler, Fault_Handler /* NMI */, Fault_Handler /* HardFault */,
    Fault_Handler /* MemManage */, Fault_Handler /* BusFault */, Fault_Handler /* UsageFault */,
};
