/* eBPF: maps and programs are a large kernel attack surface (verifier
 * bugs), and some program types read kernel memory.  bpf() must fail. */
#include <linux/bpf.h>
#include <sys/syscall.h>

#include "probe.h"

int main(void)
{
	struct bpf_insn prog[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	must_fail(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)), "bpf(MAP_CREATE)");

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (unsigned long)prog;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	must_fail(syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)), "bpf(PROG_LOAD)");
	BLOCKED("%s", probe_notes);
}
