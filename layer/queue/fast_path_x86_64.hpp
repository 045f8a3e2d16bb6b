// The fast paths in x86-64 assembly (layer/queue/fast_path.hpp says what each
// does and what every form guarantees).  Only asm text and the constraint
// for a symbol's address: the naked functions that hold it are written once,
// for every architecture that has such a file, in epoch.hpp, passthrough.hpp
// and looked_up.cpp.
//
// Why naked: GCC 12 gives the C++ form of a pass-through a prologue that
// saves a register and copies the stack arguments out and back whenever the
// function has a second way out, taken or not: +11 instructions on
// clEnqueueReadBuffer in C++, +31 with the checks inline, +2 so, against a
// pass-through's bound of +5 (layer/base/name_filter.hpp).
#pragma once

#define CLDMABUF_FAST_PATHS_ARCH "x86-64 asm"

// A symbol's address as an asm operand ("%c0(%%rip)": RIP-relative, one
// instruction; the word, the live-import count and the targets are hidden).
#define CLDMABUF_ASM_SYMBOL "i"

// count_landed(): %0 the word ("+m"), %1 kEpochOne.  The same locked add
// fetch_add compiles to, but GCC 12 treats the builtin as touching all
// memory and copies a pass-through's stack arguments (those past the sixth)
// out and back around it.  This names the one word it changes.
#define CLDMABUF_ASM_COUNT_LANDED "lock addq %1, %0"

// The pass-through's fast half: %0 the live-import count, %1 the slow half,
// %2 kEpochOne, %3 the word, %4 the slot of the next table.
#define CLDMABUF_ASM_PASSTHROUGH                                          \
    "cmpq $0, %c0(%%rip)\n\t"       /* an import is alive:             */ \
    "jne %P1\n\t"                   /*   the slow half, arguments as   */ \
                                    /*   they came                     */ \
    "lock addq %2, %c3(%%rip)\n\t"  /* count_landed()                  */ \
    "jmp *%c4(%%rip)"               /* (next().*Slot)(args...)         */

// The trampolines.  %r11 holds the trampoline's index: a scratch register
// that carries no argument in the SysV ABI (neither does %r10; %al, the
// vector count of a variadic call, is left alone).
//
// Entry I: %0 the index, %1 the common part.
#define CLDMABUF_ASM_TRAMPOLINE_ENTRY \
    "movl %0, %%r11d\n\t"             \
    "jmp %P1"

// The common part, no import alive: counted as landed, then a jump with
// nothing touched.  %0 the live-import count, %1 the tracked part, %2
// kEpochOne, %3 the word, %4 the targets.
#define CLDMABUF_ASM_TRAMPOLINE_COMMON \
    "cmpq $0, %c0(%%rip)\n\t"          \
    "jne %P1\n\t"                      \
    "lock addq %2, %c3(%%rip)\n\t"     \
    "lea %c4(%%rip), %%r10\n\t"        \
    "jmp *(%%r10,%%r11,8)"

// The tracked part, in flight until the ICD's function returns: a frame
// with 16 stack words of arguments copied (reading past the caller's own
// arguments reads its frame, which is there), the call, the end.  %0 the
// word, %1 the targets, %2 kEpochOne - kInFlightOne.
#define CLDMABUF_ASM_TRAMPOLINE_TRACKED                                               \
    "lock addq $1, %c0(%%rip)\n\t" /* begin_command() */                               \
    "push %%rbp\n\t"                                                                   \
    "mov %%rsp, %%rbp\n\t"                                                             \
    "sub $144, %%rsp\n\t" /* 16 words + the index, 16-byte aligned */                  \
    "mov %%r11, 128(%%rsp)\n\t"                                                        \
    "xor %%r10d, %%r10d\n"                                                             \
    "1:\n\t"                                                                           \
    "mov 16(%%rbp,%%r10,8), %%r11\n\t"                                                 \
    "mov %%r11, (%%rsp,%%r10,8)\n\t"                                                   \
    "inc %%r10\n\t"                                                                    \
    "cmp $16, %%r10\n\t"                                                               \
    "jb 1b\n\t"                                                                        \
    "mov 128(%%rsp), %%r11\n\t"                                                        \
    "lea %c1(%%rip), %%r10\n\t"                                                        \
    "call *(%%r10,%%r11,8)\n\t" /* the ICD's function */                               \
    "lock addq %2, %c0(%%rip)\n\t" /* end_command(): %rax/%rdx/%xmm0 kept */           \
    "leave\n\t"                                                                        \
    "ret"
