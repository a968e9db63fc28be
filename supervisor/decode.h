/* Decoding a denied syscall's arguments for people, the way strace does:
 * socket(AF_PACKET, SOCK_RAW|SOCK_CLOEXEC, 768).
 *
 * One table per kind of argument (address family, socket type, ptrace
 * request, clone flags, mode bits, ioctl request, ...) and one row per
 * syscall naming the kind of each argument (supervisor/decode.c).  Only
 * numbers are decoded: the supervisor never reads the jail's memory, so a
 * pointer (a path, a struct) shows as 0x..., never as what it might point
 * to.  A value or bit no table names shows as hex, never guessed.  A
 * syscall without a row shows its first three arguments in hex.
 *
 * The text is for display only; the audit record keeps the raw numbers
 * ("args") next to it ("call"). */
#ifndef WARDEN_DECODE_H
#define WARDEN_DECODE_H

#include <stddef.h>
#include <stdint.h>

/* Enough for every row; longer text is cut and ends in "...". */
#define WDECODE_MAX 512

/* Write "name(arg, arg, ...)" into buf (always NUL-terminated when len > 0).
 * Returns the length written. */
size_t wdecode_call(char *buf, size_t len, const char *name, const uint64_t args[6]);

#endif
