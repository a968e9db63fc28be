/* Learning's half of the filter (include/warden/filter.h): the learn set,
 * and the interpreter the supervisor runs the policy's own program with to
 * decide a notification of a learning filter.
 *
 * Why an interpreter rather than trusting the learning filter's action:
 * under the usual policy (deny action errno, audit on) a denied call and a
 * call of the learn set both arrive as NOTIFY, and only the arguments tell
 * them apart (openat with S_ISUID is denied, without it allowed).  Running
 * the program a normal run loads, on the very numbers the notification
 * carries (struct seccomp_data: nr, arch, instruction pointer, args), gives
 * exactly its decision; nothing from the jail's memory or from the learner
 * takes part in it.  The numbers cannot change between the decision and
 * the call: SECCOMP_USER_NOTIF_FLAG_CONTINUE runs the call with the
 * registers the notification reported. */
#include <errno.h>
#include <seccomp.h>
#include <string.h>

#include "warden/filter.h"
#include "warden/util.h"

/* The calls that name a path or a network destination, which the learner
 * looks at (docs/learn.md says what it makes of each), and where their
 * paths are: argument indexes, and the dirfd argument each is relative to
 * (C: the working directory).  Sorted by name.  Not sendmsg: the jail's
 * child sends READY with it, after its filter is loaded and before the
 * supervisor has the listener that would answer (jail/enter.c step 12);
 * glibc's resolver uses send, sendto and sendmmsg. */
#define C -1
#define N -1
const struct wfilter_learn_call wfilter_learn_calls[] = {
	{ "access",     C, 0, C, N }, { "chdir",      C, 0, C, N },
	{ "connect",    C, N, C, N }, { "creat",      C, 0, C, N },
	{ "execve",     C, 0, C, N }, { "execveat",   0, 1, C, N },
	{ "faccessat",  0, 1, C, N }, { "faccessat2", 0, 1, C, N },
	{ "link",       C, 0, C, 1 }, { "linkat",     0, 1, 2, 3 },
	{ "lstat",      C, 0, C, N }, { "mkdir",      C, 0, C, N },
	{ "mkdirat",    0, 1, C, N }, { "newfstatat", 0, 1, C, N },
	{ "open",       C, 0, C, N }, { "openat",     0, 1, C, N },
	{ "readlink",   C, 0, C, N }, { "readlinkat", 0, 1, C, N },
	{ "rename",     C, 0, C, 1 }, { "renameat",   0, 1, 2, 3 },
	{ "renameat2",  0, 1, 2, 3 }, { "rmdir",      C, 0, C, N },
	{ "sendmmsg",   C, N, C, N }, { "sendto",     C, N, C, N },
	{ "stat",       C, 0, C, N }, { "statx",      0, 1, C, N },
	{ "symlink",    C, 1, C, N }, { "symlinkat",  1, 2, C, N },
	{ "truncate",   C, 0, C, N }, { "unlink",     C, 0, C, N },
	{ "unlinkat",   0, 1, C, N },
};
#undef C
#undef N
const size_t wfilter_learn_calls_n = ARRAY_SIZE(wfilter_learn_calls);

bool wfilter_learn_name(const char *name)
{
	for (size_t i = 0; name && i < wfilter_learn_calls_n; i++)
		if (!strcmp(wfilter_learn_calls[i].name, name))
			return true;
	return false;
}

#define NR_MAX 1024
const struct wfilter_learn_call *wfilter_learn_call(int nr)
{
	static bool done;
	static int8_t at[NR_MAX];   /* index + 1 in wfilter_learn_calls, 0 none */

	if (!done) {
		for (size_t i = 0; i < wfilter_learn_calls_n; i++) {
			int n = seccomp_syscall_resolve_name(wfilter_learn_calls[i].name);
			if (n >= 0 && n < NR_MAX)
				at[n] = (int8_t)(i + 1);
		}
		done = true;
	}
	return nr >= 0 && nr < NR_MAX && at[nr] ? &wfilter_learn_calls[at[nr] - 1] : NULL;
}

bool wfilter_learn_nr(int nr)
{
	return wfilter_learn_call(nr) != NULL;
}

/* Classic BPF as seccomp accepts it (the kernel's seccomp_check_filter):
 * loads of aligned words inside struct seccomp_data, the scratch memory,
 * ALU and jumps on constants or X, RET.  Anything else, a jump outside the
 * program or no RET: KILL_PROCESS.  Jumps only go forward, so the loop runs
 * at most len times. */
uint32_t wfilter_eval(const struct sock_filter *insns, size_t len, const struct seccomp_data *d)
{
	uint32_t A = 0, X = 0, mem[BPF_MEMWORDS] = { 0 };
	size_t pc = 0;

	if (!insns || !len || len > BPF_MAXINSNS)
		return SECCOMP_RET_KILL_PROCESS;
	while (pc < len) {
		const struct sock_filter *f = &insns[pc++];
		uint32_t src = BPF_SRC(f->code) == BPF_X ? X : f->k;
		size_t left = len - pc;
		bool t;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (f->k % 4 || f->k > sizeof(*d) - 4)
				return SECCOMP_RET_KILL_PROCESS;
			memcpy(&A, (const char *)d + f->k, 4);
			continue;
		case BPF_LD | BPF_W | BPF_LEN:   A = sizeof(*d); continue;
		case BPF_LDX | BPF_W | BPF_LEN:  X = sizeof(*d); continue;
		case BPF_LD | BPF_IMM:           A = f->k; continue;
		case BPF_LDX | BPF_IMM:          X = f->k; continue;
		case BPF_MISC | BPF_TAX:         X = A; continue;
		case BPF_MISC | BPF_TXA:         A = X; continue;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (f->k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			if (f->code == (BPF_LD | BPF_MEM))
				A = mem[f->k];
			else if (f->code == (BPF_LDX | BPF_MEM))
				X = mem[f->k];
			else
				mem[f->k] = f->code == BPF_ST ? A : X;
			continue;
		case BPF_RET | BPF_K: return f->k;
		case BPF_RET | BPF_A: return A;
		case BPF_JMP | BPF_JA:
			if (f->k >= left)
				return SECCOMP_RET_KILL_PROCESS;
			pc += f->k;
			continue;
		default:
			break;
		}
		switch (BPF_CLASS(f->code)) {
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += src; continue;
			case BPF_SUB: A -= src; continue;
			case BPF_MUL: A *= src; continue;
			case BPF_OR:  A |= src; continue;
			case BPF_AND: A &= src; continue;
			case BPF_XOR: A ^= src; continue;
			case BPF_LSH: A = src < 32 ? A << src : 0; continue;
			case BPF_RSH: A = src < 32 ? A >> src : 0; continue;
			case BPF_NEG: A = -A; continue;
			case BPF_DIV:
				if (!src)
					return SECCOMP_RET_KILL_PROCESS;
				A /= src;
				continue;
			case BPF_MOD:
				if (!src)
					return SECCOMP_RET_KILL_PROCESS;
				A %= src;
				continue;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
		case BPF_JMP:
			switch (BPF_OP(f->code)) {
			case BPF_JEQ:  t = A == src; break;
			case BPF_JGT:  t = A > src; break;
			case BPF_JGE:  t = A >= src; break;
			case BPF_JSET: t = (A & src) != 0; break;
			default:
				return SECCOMP_RET_KILL_PROCESS;
			}
			if ((size_t)(t ? f->jt : f->jf) >= left)
				return SECCOMP_RET_KILL_PROCESS;
			pc += t ? f->jt : f->jf;
			continue;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS;   /* fell off the end */
}
