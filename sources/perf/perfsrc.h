/*
 * perfsrc.h - the perf source's state, shared by its files: src_perf.c
 * (the plugin: parameters table, open, start, stop, the command),
 * perf_params.c (parsing the parameters), perf_events.c (opening the
 * events and their rings), perf_meta.c (the metadata and the records of
 * the tasks alive at the start), perf_ring.c (reading the rings).
 */
#ifndef PIPE_PERFSRC_H
#define PIPE_PERFSRC_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "pipe_plugin.h"

#define PERF_MAX_EVENTS 32      /* event= items */
#define PERF_MAX_CPUS 4096      /* matches the metadata's stream limit */
#define PERF_MAX_TARGETS 4096   /* threads of pid=/tid= */
#define PERF_MAX_FDS 65536      /* events x cpus x threads */
#define PERF_SYNTH_MAX (64u << 20) /* bytes of /proc records at start */
#define PERF_REC_MAX 65536      /* perf_event_header.size is 16 bits */
#define PERF_TRAILER 32         /* sample_id_all: TID TIME CPU IDENTIFIER */
#define DRAIN_MARK_SLEEPS 64    /* sleeps on the watermarks after a surprise */

/* A named event the user may ask for. */
struct perf_event_name {
	const char *name;  /* as given in event= */
	uint32_t type;     /* PERF_TYPE_HARDWARE or _SOFTWARE */
	uint64_t config;   /* PERF_COUNT_* */
};

/* One CPU's mmap ring and what went through it. */
struct perf_ring {
	int cpu;                /* CPU number */
	int fd;                 /* the event that owns the mapping */
	void *map;              /* 1 + 2^n pages */
	size_t map_len;         /* bytes mapped */
	struct perf_event_mmap_page *page; /* control page */
	const uint8_t *data;    /* data pages */
	uint64_t size;          /* data bytes, a power of 2 */
	uint64_t tail;          /* consumed up to here (not yet published) */
	uint64_t lost;          /* sum of PERF_RECORD_LOST.lost seen */
	uint64_t throttled;     /* PERF_RECORD_THROTTLE records seen */
	uint64_t last_time;     /* time of the newest record seen, ns */
	uint8_t *bounce;        /* the one record per batch that wraps */
	bool hup;               /* its task exited: left out of the poll set */
	uint64_t last_id;       /* kernel id of the previous record */
	uint32_t last_event;    /* its event index (PIPE_EVENT_NONE: none) */
	uint64_t rate_head;     /* data_head at the start of the rate window */
	double rate;            /* bytes/s into the ring in the last window */
	uint64_t side_bytes;    /* bytes of records other than samples read */
	uint64_t side_mark;     /* side_bytes at the start of the window */
	double side_peak;       /* their recent peak rate, bytes/s */
};

/* Call chains to record. */
enum perf_chain {
	PERF_CHAIN_NONE = 0,  /* the ip alone */
	PERF_CHAIN_FP = 1,    /* the kernel walks frame pointers */
	PERF_CHAIN_DWARF = 2, /* user registers and stack, unwound later */
};

/* callchain=dwarf: default and largest user stack dump (as perf) */
#define PERF_STACK_DEFAULT 8192
#define PERF_STACK_MAX 65528

#if defined(__x86_64__)
/*
 * The user registers recorded for DWARF unwinding on x86_64: the ip, the
 * stack pointer and the callee-saved registers (BX, BP, R12-R15), all a
 * CFI unwinder reads at the interrupted frame of compiled code.  perf
 * records the caller-saved ones too (mask 0xff0fff): they change at every
 * sample and cost a third of the compressed bytes.
 */
#define PERF_REGS_USER UINT64_C(0xf001c2)
#else
#define PERF_REGS_USER UINT64_C(0)
#endif

/* What the recording targets. */
enum perf_mode {
	PERF_MODE_SYSTEM = 0,   /* pid=-1 on every CPU */
	PERF_MODE_COMMAND = 1,  /* the forked `-- CMD` and its children */
	PERF_MODE_ATTACH = 2,   /* running pid=/tid= threads */
};

struct perf_src {
	const struct pipe_host *host;
	struct pipe_ctx *ctx;

	/* parameters */
	struct perf_event_name events[PERF_MAX_EVENTS]; /* to record */
	uint32_t nr_events;
	int32_t *cpus;          /* CPU of each stream */
	uint32_t nr_cpus;
	pid_t *targets;         /* threads (attach) or the child (command) */
	uint32_t nr_targets;
	pid_t *pids;            /* processes of pid= (exit tracking) */
	uint32_t nr_pids;
	bool tids_given;        /* tid= was given (run until stopped) */
	enum perf_chain chain;  /* call chains: none, frame pointers, DWARF */
	uint32_t stack_size;    /* chain=dwarf: user stack bytes per sample */
	bool kernel;            /* samples in the kernel too */
	bool use_period;        /* period= rather than freq= */
	uint64_t rate;          /* frequency in Hz, or the period */
	uint32_t pages;         /* data pages per ring */
	int64_t duration_ns;    /* 0: until stopped */
	bool wake_mark;         /* wake=mark: always the rings' watermarks */
	enum perf_mode mode;

	/* events */
	struct perf_event_attr attrs[PERF_MAX_EVENTS]; /* as recorded */
	bool lost_format;       /* read_format has PERF_FORMAT_LOST */
	int *fds;               /* [event][cpu][target], -1 when closed */
	uint64_t *ids;          /* kernel id of each fd */
	uint32_t nr_fds;
	int *dummy_fds;         /* attach mode: per-CPU ring owners */
	struct perf_ring *rings; /* one per CPU stream */
	uint64_t sample_type;

	/* reading */
	struct pipe_record *recs; /* the batch handed out */
	size_t recs_cap;
	int cur;                /* ring whose views are out, -1: none */
	uint32_t next;          /* next ring of the current pass */
	bool started;           /* start() succeeded */
	bool stopping;          /* events disabled; drain then end */
	bool final_done;        /* the last lost counts were read */
	uint8_t *final_buf;     /* LOST records made from lost counts */
	struct pipe_record *final_recs;

	/* /proc records for tasks alive at the start */
	uint8_t *synth;
	size_t synth_len;
	size_t synth_cap;
	struct pipe_record *synth_recs;
	size_t synth_nr;
	size_t synth_recs_cap;
	bool synth_pending;     /* not handed out yet */

	/* command */
	pid_t child;            /* 0: none */
	int child_pidfd;        /* -1: none */
	bool child_reaped;
	int *pidfds;            /* attach mode: one per pid= process */
	int timerfd;            /* duration=, -1: none */
	int hup_timerfd;        /* drains hung-up rings, -1: none */
	struct timespec deadline; /* CLOCK_MONOTONIC end of duration= */
	bool duration_over;     /* the deadline passed */

	/* waking: on a timer sized by the rings' rates, or the watermark */
	bool timed_ok;          /* wake=auto, inherited events sampling on a
				   timer with freq= */
	int drain_timerfd;      /* the timer that drains the rings, -1: none */
	bool timed;             /* the last sleep left the ring fds out */
	bool timer_armed;       /* drain_timerfd is set */
	uint32_t mark_sleeps;   /* sleeps left on the watermarks (a ring ran
				   past the timer's bound) */
	uint64_t drain_level;   /* fill the timer aims below, bytes */
	uint64_t mark_bytes;    /* the rings' wakeup_watermark */
	double samples_max;     /* the most bytes/s of samples into a ring */
	double win_at;          /* start of the rate window, CLOCK_MONOTONIC ns */
	uint64_t exits;         /* PERF_RECORD_EXIT records read */
	uint64_t exits_mark;    /* exits at the start of the window */
	double exit_rate;       /* exits a second, smoothed */
	uint64_t lost_seen;     /* sum of the rings' lost counts at the last
				   sleep */
	uint64_t sleeps_timed;  /* sleeps on the timer, on the watermarks */
	uint64_t sleeps_marked;
	bool said_sleeps;       /* they were logged (-v) */
};

/* perf_params.c */
int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned long flags);
int pidfd_open(pid_t pid);
/* Read a small text file into buf (NUL-terminated); bytes or -errno. */
ssize_t read_text(const char *path, char *buf, size_t cap);
/* /proc/sys/kernel/perf_event_paranoid, 2 when unreadable. */
int paranoid_level(void);
/* Parse a decimal number that must fill the whole text. */
int parse_u32(const char *s, uint32_t *out);
/* The named event of event=, NULL when unknown. */
const struct perf_event_name *event_lookup(const char *name);
/* Read and check every parameter into s (in open). */
int perf_configure(struct perf_src *s);

/* perf_events.c */
/* Where the fd of event e, CPU c, thread t is kept in s->fds. */
uint32_t fd_index(const struct perf_src *s, uint32_t e, uint32_t c,
		  uint32_t t);
/* Open every event on every CPU (and thread), and the rings. */
int open_events(struct perf_src *s);
/* Enable or disable every event (req: a PERF_EVENT_IOC_ request). */
int enable_all(struct perf_src *s, unsigned long req);

/* perf_meta.c */
/* The events, with their kernel ids, and the streams, in the metadata. */
int meta_events(struct perf_src *s);
/* The properties: host, kernel, command line, clock. */
int meta_props(struct perf_src *s);
/* COMM, FORK and MMAP2 records of the tasks alive at the start. */
int synth_tasks(struct perf_src *s);

/* perf_ring.c */
/* The plugin's read: the next batch of records from the rings. */
int perf_read(void *state, struct pipe_batch *out);
/* Before a sleep: arm the drain timer and say whether the rings' fds are
 * to be polled (false: the timer covers them). */
bool drain_plan(struct perf_src *s);

/* src_perf.c */
/* Disable every event; from here on reads drain the rings and end. */
void begin_stop(struct perf_src *s);
/* Whether the recording should end now: duration over, the command or
 * every attached process gone. */
bool should_end(struct perf_src *s);

#endif
