/*
 * unwind.c - DWARF unwinding of sampled user stacks with libdw (see
 * unwind.h).  A process keeps its Dwfl between samples, so each binary's
 * ELF and CFI are read once; modules are reported the first time a frame
 * lands in them.  Only x86_64 register dumps are understood.
 *
 * libdw's own unwinder allocates a frame state, a CFI frame and an
 * expression stack for every step of every sample.  Most steps follow
 * the few rules compilers emit (the CFA a register plus an offset, each
 * register undefined, unchanged, saved at CFA+N or equal to CFA+N), so
 * each call site's rule is taken from libdw's CFI once, kept per process
 * keyed by the address looked up, and applied here without allocating.
 * A sample that meets anything else (no CFI, a signal frame, a DWARF
 * expression) is unwound by libdw whole, so the frames are the same.
 * PIPE_UNWIND_CHECK=1 unwinds every sample both ways, aborts with both
 * frame lists when they differ and says at the end how many went which
 * way (the tests run with it).
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "trust.h"
#include "unwind.h"

/* Processes whose Dwfl stays open; the least recently used goes first. */
#define UNWIND_PROCS 32
/* Files that would not load, remembered per process (not retried). */
#define UNWIND_BAD_MAX 16
/* where distributions install separate debug files */
#define UNWIND_DEBUG_ROOT "/usr/lib/debug"
/* longest build-id looked up (GNU ones are 20 bytes) */
#define UNWIND_BUILD_ID_MAX 64
/* x86_64 DWARF registers: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip */
#define UNWIND_NREGS 17
#define DWARF_SP 7
#define DWARF_RA 16
/* call-site rules kept per process (direct-mapped by address) */
#define UNWIND_RULES 4096

/* perf's x86_64 register numbers, in DWARF order (PERF_REG_X86_*) */
static const uint8_t perf_of_dwarf[UNWIND_NREGS] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8,
};

/* How one register of the caller is found from the callee's state. */
enum reg_rule {
	REG_UNSET,    /* undefined (or a rule libdw rejects) */
	REG_SAME,     /* the callee's value */
	REG_AT_CFA,   /* saved in memory at CFA + off */
	REG_CFA_PLUS, /* its value is CFA + off */
};

/* The unwinding rule at one address, in the common forms. */
struct call_rule {
	uint64_t pc;                 /* address looked up; 0: slot empty */
	int64_t cfa_off;             /* CFA = register cfa_reg + cfa_off */
	int64_t off[UNWIND_NREGS];
	uint8_t how[UNWIND_NREGS];   /* enum reg_rule */
	uint8_t cfa_reg;
	bool fast;                   /* false: libdw must unwind here */
};

struct unwind_proc {
	Dwfl *dwfl;                    /* NULL: slot free */
	struct call_rule *rules;       /* UNWIND_RULES, NULL until used */
	uint32_t pid;
	bool attached;                 /* dwfl_attach_state done */
	uint64_t last_use;             /* u->clock at the last unwind */
	uint64_t bad[UNWIND_BAD_MAX];  /* map starts that failed to load */
	uint32_t nr_bad;
};

/* The sample being unwound. */
struct unwind_cur {
	uint32_t pid, tid;
	uint64_t sp;                    /* the dump starts here */
	const uint8_t *stack;
	uint64_t stack_len;
	Dwarf_Word regs[UNWIND_NREGS];
	uint64_t *frames;
	uint32_t nr, max;
};

struct unwind {
	unwind_find_map_fn find_map;
	void *opaque;
	struct unwind_proc procs[UNWIND_PROCS];
	uint64_t clock;                 /* unwinds so far */
	struct unwind_cur *cur;         /* set during an unwind */
	struct unwind_proc *cur_proc;
	char *debuginfo_path;           /* NULL: libdw's default */
	Dwfl_Callbacks cb;              /* lives as long as the Dwfls */
	bool check;                     /* PIPE_UNWIND_CHECK=1 */
	uint64_t nr_fast, nr_libdw;     /* samples unwound each way */
};

/* Is the ELF file open on fd the one whose build-id is id? */
static bool has_build_id(int fd, const unsigned char *id, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got;
	ssize_t n;
	bool same;

	if (!elf)
		return false;
	n = dwelf_elf_gnu_build_id(elf, &got);
	same = n == len && memcmp(got, id, (size_t)len) == 0;
	elf_end(elf);
	return same;
}

/* A candidate debug file: its fd, *name set (libdw frees it), or -1
 * when it is missing, not a regular file or not the module's. */
static int debug_candidate(const char *path, const char *main_file,
			   const unsigned char *id, int len, char **name)
{
	struct pipe_err err;
	struct stat st;
	int fd;

	if (main_file && !strcmp(path, main_file))
		return -1;
	/* the recording names these places: a FIFO must not hang us */
	fd = trust_open(path, "cannot open", &st, &err);
	if (fd < 0)
		return -1;
	if (!has_build_id(fd, id, len)) {
		close(fd);
		return -1;
	}
	*name = strdup(path);
	if (!*name) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * libdw's find_debuginfo callback.  dwfl_standard_find_debuginfo opens
 * each place it looks at with a blocking open(2), so a FIFO there would
 * hang pipe beyond Ctrl-C; this one looks at the places it looks at by
 * default, each opened as every file a recording names is (trust_open),
 * and keeps a file only when its build-id is the module's:
 * /usr/lib/debug/.build-id/xx/rest.debug, then for a .gnu_debuglink
 * LINK of DIR/binary: DIR/LINK, DIR/.debug/LINK, /usr/lib/debug/DIR/LINK.
 * A module without a build-id gets no debug file (nothing would tell a
 * stale one); its .eh_frame still unwinds it.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata,
			  const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	char cand[PATH_MAX], hex[2 * UNWIND_BUILD_ID_MAX + 1];
	const unsigned char *id;
	const char *slash;
	GElf_Addr vaddr;
	int len, i, dir, fd;

	(void)userdata;
	(void)modname;
	(void)base;
	(void)debuglink_crc;
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len < 2 || len > UNWIND_BUILD_ID_MAX)
		return -1;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(cand, sizeof(cand), UNWIND_DEBUG_ROOT "/.build-id/%.2s/%s.debug",
		 hex, hex + 2);
	fd = debug_candidate(cand, file_name, id, len, debuginfo_file_name);
	slash = file_name ? strrchr(file_name, '/') : NULL;
	if (fd >= 0 || !debuglink_file || !debuglink_file[0] || !slash)
		return fd;
	dir = (int)(slash - file_name);
	snprintf(cand, sizeof(cand), "%.*s/%s", dir, file_name, debuglink_file);
	fd = debug_candidate(cand, file_name, id, len, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	snprintf(cand, sizeof(cand), "%.*s/.debug/%s", dir, file_name,
		 debuglink_file);
	fd = debug_candidate(cand, file_name, id, len, debuginfo_file_name);
	if (fd >= 0)
		return fd;
	snprintf(cand, sizeof(cand), UNWIND_DEBUG_ROOT "%.*s/%s", dir,
		 file_name, debuglink_file);
	return debug_candidate(cand, file_name, id, len, debuginfo_file_name);
}

int unwind_new(struct unwind **out, unwind_find_map_fn find_map,
	       void *opaque)
{
	struct unwind *u = calloc(1, sizeof(*u));
	const char *check;

	if (!u)
		return -ENOMEM;
	u->find_map = find_map;
	u->opaque = opaque;
	u->cb.find_debuginfo = find_debuginfo;
	u->cb.section_address = dwfl_offline_section_address;
	u->cb.debuginfo_path = &u->debuginfo_path;
	check = secure_getenv("PIPE_UNWIND_CHECK");
	u->check = check && !strcmp(check, "1");
	*out = u;
	return 0;
}

static void proc_release(struct unwind_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	free(p->rules);
	memset(p, 0, sizeof(*p));
}

void unwind_free(struct unwind *u)
{
	uint32_t i;

	if (!u)
		return;
	if (u->check)
		fprintf(stderr, "pipe: unwind check: %" PRIu64 " stacks unwound "
			"by call-site rules, %" PRIu64 " by libdw alone; the "
			"rules' frames were libdw's\n", u->nr_fast, u->nr_libdw);
	for (i = 0; i < UNWIND_PROCS; i++)
		proc_release(&u->procs[i]);
	free(u);
}

void unwind_drop(struct unwind *u, uint32_t pid)
{
	uint32_t i;

	if (!u)
		return;
	for (i = 0; i < UNWIND_PROCS; i++)
		if (u->procs[i].dwfl && u->procs[i].pid == pid)
			proc_release(&u->procs[i]);
}

/* The process's slot, a fresh Dwfl in the least recently used one if
 * needed; NULL when libdw cannot start one. */
static struct unwind_proc *proc_get(struct unwind *u, uint32_t pid)
{
	struct unwind_proc *p, *lru = &u->procs[0];
	uint32_t i;

	for (i = 0; i < UNWIND_PROCS; i++) {
		p = &u->procs[i];
		if (p->dwfl && p->pid == pid)
			return p;
		if (!p->dwfl || (lru->dwfl && p->last_use < lru->last_use))
			lru = p;
	}
	proc_release(lru);
	lru->dwfl = dwfl_begin(&u->cb);
	if (!lru->dwfl)
		return NULL;
	lru->pid = pid;
	return lru;
}

/* Make sure the binary mapped at pc is a module of p's Dwfl. */
static bool report_module(struct unwind *u, struct unwind_proc *p,
			  uint64_t pc)
{
	struct unwind_map m;
	struct pipe_err err;
	struct stat st;
	const char *name;
	Dwfl_Module *mod;
	uint32_t i;
	int fd;

	if (dwfl_addrmodule(p->dwfl, pc))
		return true;
	if (!u->find_map(u->opaque, p->pid, pc, &m))
		return false;
	for (i = 0; i < p->nr_bad; i++)
		if (p->bad[i] == m.start)
			return false;
	name = strrchr(m.path, '/');
	name = name ? name + 1 : m.path;
	/* the recording names the file: a FIFO there must not hang us */
	fd = trust_open(m.path, "cannot open", &st, &err);
	mod = NULL;
	if (fd >= 0) {
		dwfl_report_begin_add(p->dwfl);
		/* on success the module owns fd */
		mod = dwfl_report_elf(p->dwfl, name, m.path, fd,
				      m.start - m.pgoff, false);
		dwfl_report_end(p->dwfl, NULL, NULL);
		if (!mod)
			close(fd);
	}
	if (!mod && p->nr_bad < UNWIND_BAD_MAX)
		p->bad[p->nr_bad++] = m.start;
	return mod != NULL;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return (pid_t)u->cur->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Stack memory comes from the dump; nothing else is readable. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result,
			void *arg)
{
	const struct unwind_cur *c = ((struct unwind *)arg)->cur;

	(void)dwfl;
	if (addr < c->sp || c->stack_len < sizeof(*result) ||
	    addr - c->sp > c->stack_len - sizeof(*result))
		return false;
	memcpy(result, c->stack + (addr - c->sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_cur *c = ((struct unwind *)arg)->cur;

	return dwfl_thread_state_registers(thread, 0, UNWIND_NREGS, c->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind *u = arg;
	struct unwind_cur *c = u->cur;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* the next step needs the CFI of the binary this frame is in */
	report_module(u, u->cur_proc, activation || pc == 0 ? pc : pc - 1);
	c->frames[c->nr++] = pc;
	return c->nr < c->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}


/* ---- call-site rules --------------------------------------------------- */

/* A register's rule from libdw's CFI frame; false for a form not kept. */
static bool rule_reg(Dwarf_Frame *f, int reg, struct call_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t n, i = 1;

	r->how[reg] = REG_UNSET;
	r->off[reg] = 0;
	/* libdw leaves a register it cannot read unset and goes on */
	if (dwarf_frame_register(f, reg, mem, &ops, &n) != 0)
		return true;
	if (n == 0) {
		if (!ops)
			r->how[reg] = REG_SAME;
		return true; /* undefined, or an empty rule libdw rejects */
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (i < n && ops[i].atom == DW_OP_plus_uconst)
		r->off[reg] = (int64_t)ops[i++].number;
	r->how[reg] = REG_AT_CFA;
	if (i < n && ops[i].atom == DW_OP_stack_value) {
		r->how[reg] = REG_CFA_PLUS;
		i++;
	}
	return i == n;
}

/* The rule at pc from the CFI of the module there, as libdw looks it up
 * (.eh_frame first, then .debug_frame); r->fast false when it has none
 * or a form not kept. */
static void rule_make(struct unwind_proc *p, uint64_t pc,
		      struct call_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, pc);
	Dwarf_Frame *f = NULL;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	Dwarf_Op *ops;
	size_t nops;
	bool signal = false;
	int reg;

	memset(r, 0, sizeof(*r));
	r->pc = pc;
	if (!mod)
		return;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &f) != 0) {
		f = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &f) != 0)
			return;
	}
	if (dwarf_frame_info(f, NULL, NULL, &signal) != DWARF_RA || signal ||
	    dwarf_frame_cfa(f, &ops, &nops) != 0 || nops != 1 ||
	    ops[0].atom != DW_OP_bregx || ops[0].number >= UNWIND_NREGS)
		goto out;
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = (int64_t)ops[0].number2;
	for (reg = 0; reg < UNWIND_NREGS; reg++)
		if (!rule_reg(f, reg, r))
			goto out;
	r->fast = true;
out:
	free(f);
}

/* The rule at pc, from the process's cache; NULL without memory. */
static const struct call_rule *rule_at(struct unwind_proc *p, uint64_t pc)
{
	struct call_rule *r;

	if (!p->rules) {
		p->rules = calloc(UNWIND_RULES, sizeof(*p->rules));
		if (!p->rules)
			return NULL;
	}
	r = &p->rules[(pc ^ pc >> 12) & (UNWIND_RULES - 1)];
	if (r->pc != pc || pc == 0)
		rule_make(p, pc, r);
	return r;
}

/*
 * Unwind c with the kept rules, as libdw would: each frame's pc is
 * recorded, then its rule gives the caller's registers (one libdw could
 * not compute is unset; a return address unset or 0 ends the stack).
 * False when a frame needs libdw's unwinder (c is then to be redone).
 */
static bool fast_unwind(struct unwind *u, struct unwind_proc *p,
			struct unwind_cur *c)
{
	Dwarf_Word regs[UNWIND_NREGS], next[UNWIND_NREGS], cfa, v;
	uint32_t set = (1u << UNWIND_NREGS) - 1, nset, reg;
	const struct call_rule *r;
	uint64_t pc = c->regs[DWARF_RA], look = pc;

	memcpy(regs, c->regs, sizeof(regs));
	for (;;) {
		c->frames[c->nr++] = pc;
		if (c->nr >= c->max)
			return true;
		report_module(u, p, look);
		r = rule_at(p, look);
		if (!r || !r->fast)
			return false;
		if (!(set & 1u << r->cfa_reg))
			return true; /* no CFA: every saved register unset */
		cfa = regs[r->cfa_reg] + (uint64_t)r->cfa_off;
		nset = 0;
		for (reg = 0; reg < UNWIND_NREGS; reg++) {
			uint32_t bit = 1u << reg;

			switch (r->how[reg]) {
			case REG_SAME:
				next[reg] = regs[reg];
				nset |= set & bit;
				break;
			case REG_AT_CFA:
				if (memory_read(NULL, cfa + (uint64_t)r->off[reg],
						&v, u)) {
					next[reg] = v;
					nset |= bit;
				}
				break;
			case REG_CFA_PLUS:
				next[reg] = cfa + (uint64_t)r->off[reg];
				nset |= bit;
				break;
			default:
				break;
			}
		}
		if (!(nset & 1u << DWARF_RA) || next[DWARF_RA] == 0)
			return true; /* the outermost frame */
		memcpy(regs, next, sizeof(regs));
		set = nset;
		pc = regs[DWARF_RA];
		look = pc - 1;
	}
}

/* The DWARF-ordered registers from a perf dump; false without ip or sp. */
static bool take_regs(const struct unwind_regs *r, Dwarf_Word *out)
{
	uint32_t i;

	for (i = 0; i < UNWIND_NREGS; i++) {
		uint64_t bit = UINT64_C(1) << perf_of_dwarf[i];
		uint32_t at;

		out[i] = 0;
		if (!(r->mask & bit))
			continue;
		at = (uint32_t)__builtin_popcountll(r->mask & (bit - 1));
		if (at >= r->nr_regs)
			return false;
		memcpy(&out[i], (const uint8_t *)r->regs + 8 * at, 8);
	}
	return (r->mask & (UINT64_C(1) << 7)) && (r->mask & (UINT64_C(1) << 8));
}

/* libdw's unwinder over c (u->cur is c) */
static void libdw_unwind(struct unwind *u, struct unwind_proc *p,
			 struct unwind_cur *c)
{
	/* ends with an error at the outermost frame: what it found counts */
	dwfl_getthread_frames(p->dwfl, (pid_t)c->tid, frame_cb, u);
}

/* PIPE_UNWIND_CHECK=1: libdw's frames must be c's */
static void check_unwind(struct unwind *u, struct unwind_proc *p,
			 struct unwind_cur *c)
{
	struct unwind_cur d = *c;
	uint32_t i;

	d.frames = calloc(c->max, sizeof(*d.frames));
	if (!d.frames)
		return;
	d.nr = 0;
	u->cur = &d;
	libdw_unwind(u, p, &d);
	u->cur = c;
	if (d.nr == c->nr && !memcmp(d.frames, c->frames, 8 * d.nr)) {
		free(d.frames);
		return;
	}
	fprintf(stderr, "pipe: unwind check: pid %" PRIu32 " tid %" PRIu32
		": %" PRIu32 " frames, libdw %" PRIu32 ":\n", c->pid, c->tid,
		c->nr, d.nr);
	for (i = 0; i < c->nr || i < d.nr; i++)
		fprintf(stderr, "  %2" PRIu32 " %#18" PRIx64 " %#18" PRIx64 "\n",
			i, i < c->nr ? c->frames[i] : 0,
			i < d.nr ? d.frames[i] : 0);
	abort();
}

uint32_t unwind_stack(struct unwind *u, uint32_t pid, uint32_t tid,
		      const struct unwind_regs *r, uint64_t *frames,
		      uint32_t max)
{
	struct unwind_cur c = { .pid = pid, .tid = tid, .frames = frames };
	struct unwind_proc *p;

	if (max == 0 || !take_regs(r, c.regs))
		return 0;
	c.max = max;
	c.sp = c.regs[DWARF_SP];
	c.stack = r->stack;
	c.stack_len = r->stack ? r->stack_len : 0;
	frames[0] = c.regs[UNWIND_NREGS - 1];
	p = proc_get(u, pid);
	if (!p)
		return 1;
	p->last_use = ++u->clock;
	if (!report_module(u, p, frames[0]))
		return 1;
	if (!p->attached) {
		if (!dwfl_attach_state(p->dwfl, NULL, (pid_t)pid,
				       &thread_callbacks, u))
			return 1;
		p->attached = true;
	}
	u->cur = &c;
	u->cur_proc = p;
	if (!fast_unwind(u, p, &c)) {
		c.nr = 0;
		libdw_unwind(u, p, &c);
		u->nr_libdw++;
	} else {
		u->nr_fast++;
		if (u->check)
			check_unwind(u, p, &c);
	}
	u->cur = NULL;
	u->cur_proc = NULL;
	return c.nr ? c.nr : 1;
}
