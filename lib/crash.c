/*
 * crash.c - the crash report (see crash.h).  The handler runs on an
 * alternate stack and uses only async-signal-safe calls: write, kill,
 * waitpid, nanosleep, pause, unlink, _exit, and a lock-free atomic flag.
 * The little state it reads is set before any plugin runs or changes one
 * pointer at a time.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crash.h"

#define CRASH_TMP_MAX 32
#define CRASH_STACK (64u << 10)

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL,
				     SIGABRT };
#define NR_SIGNALS (sizeof(crash_signals) / sizeof(crash_signals[0]))

static _Thread_local struct crash_site cur;
static _Thread_local void *thread_stack;
static _Thread_local volatile sig_atomic_t reporting; /* this thread reports */
static atomic_flag reported = ATOMIC_FLAG_INIT;      /* a thread reports */
static struct sigaction old_actions[NR_SIGNALS];
static bool crash_installed;  /* the handlers are in place */
static volatile pid_t command_pid;
static const char *volatile tmp_paths[CRASH_TMP_MAX];

struct crash_site crash_enter(const char *what, const char *path,
			      const char *call)
{
	struct crash_site prev = cur;

	cur.what = NULL; /* never a half-written site */
	cur.path = path;
	cur.call = call;
	cur.what = what;
	return prev;
}

void crash_leave(struct crash_site prev)
{
	cur.what = NULL;
	cur.path = prev.path;
	cur.call = prev.call;
	cur.what = prev.what;
}

void crash_set_command(pid_t pid)
{
	command_pid = pid;
}

void crash_tmp_add(const char *path)
{
	size_t i;

	for (i = 0; i < CRASH_TMP_MAX; i++) {
		if (!tmp_paths[i]) {
			tmp_paths[i] = path;
			return;
		}
	}
}

void crash_tmp_del(const char *path)
{
	size_t i;

	for (i = 0; i < CRASH_TMP_MAX; i++)
		if (tmp_paths[i] == path)
			tmp_paths[i] = NULL;
}

/* ---- the handler ------------------------------------------------------- */

static const char *signal_text(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "Segmentation fault";
	case SIGBUS:
		return "Bus error";
	case SIGFPE:
		return "Floating point exception";
	case SIGILL:
		return "Illegal instruction";
	default:
		return "Aborted";
	}
}

/* Append s to buf[*n..cap) */
static void put(char *buf, size_t cap, size_t *n, const char *s)
{
	while (*s && *n + 1 < cap)
		buf[(*n)++] = *s++;
}

/* Ctrl-C for the command, then, if it ignores that, SIGKILL. */
static void stop_command(void)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	pid_t pid = command_pid;
	int i, st;

	if (pid <= 0)
		return;
	kill(pid, SIGINT);
	for (i = 0; i < 200; i++) {
		if (waitpid(pid, &st, WNOHANG) != 0)
			return;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	char line[1024];
	size_t n = 0, i;

	(void)si;
	(void)uc;
	if (!cur.what) {
		/* ours, not a plugin's: let the previous handler have it */
		for (i = 0; i < NR_SIGNALS; i++)
			if (crash_signals[i] == sig)
				sigaction(sig, &old_actions[i], NULL);
		raise(sig);
		return;
	}
	/*
	 * One line however many threads crash at once (decoding threads
	 * running the same codec): the first reports and its _exit ends the
	 * others, which wait for it.
	 */
	if (atomic_flag_test_and_set(&reported)) {
		if (reporting)
			_exit(1); /* crashed again while reporting */
		for (;;)
			pause();
	}
	reporting = 1;
	put(line, sizeof(line), &n, "pipe: ");
	put(line, sizeof(line), &n, cur.what);
	if (cur.path) {
		put(line, sizeof(line), &n, " (");
		put(line, sizeof(line), &n, cur.path);
		put(line, sizeof(line), &n, ")");
	}
	put(line, sizeof(line), &n, " crashed in ");
	put(line, sizeof(line), &n, cur.call ? cur.call : "?");
	put(line, sizeof(line), &n, "(): ");
	put(line, sizeof(line), &n, signal_text(sig));
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		n = 0; /* nothing better to do */
	stop_command();
	for (i = 0; i < CRASH_TMP_MAX; i++)
		if (tmp_paths[i])
			unlink(tmp_paths[i]);
	_exit(1);
}

/*
 * The main thread's alternate stack is static: it is always there. A
 * worker thread's is allocated when the thread starts; without one (no
 * memory, sigaltstack refusing) the handler still runs on the thread's
 * own stack, for every crash but a stack overflow, which then ends pipe
 * with the bare signal: said once, on the first thread it happens to.
 */
static _Alignas(16) char main_altstack[CRASH_STACK];
static atomic_flag no_stack_said = ATOMIC_FLAG_INIT;

static bool stack_set(void *sp)
{
	stack_t ss = { .ss_sp = sp, .ss_size = CRASH_STACK };

	return sp && sigaltstack(&ss, NULL) == 0;
}

static void stack_missing(int errnum)
{
	static const char what[] = "pipe: warning: no alternate signal "
		"stack for a thread (";
	static const char then[] = "): a plugin's stack overflow on it "
		"would end pipe without saying which\n";
	const char *e = strerror(errnum);

	if (atomic_flag_test_and_set(&no_stack_said))
		return;
	if (write(STDERR_FILENO, what, sizeof(what) - 1) < 0 ||
	    write(STDERR_FILENO, e, strlen(e)) < 0 ||
	    write(STDERR_FILENO, then, sizeof(then) - 1) < 0)
		return; /* nothing better to do */
}

int crash_install(void)
{
	static bool installed;
	struct sigaction sa;
	size_t i;

	if (installed)
		return 0; /* a second time would chain to ourselves */
	installed = true;
	/* the alternate stack is where a stack overflow is reported */
	if (!stack_set(main_altstack))
		stack_missing(errno);
	crash_installed = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NR_SIGNALS; i++)
		if (sigaction(crash_signals[i], &sa, &old_actions[i]) < 0)
			return -errno;
	return 0;
}

void crash_thread_begin(void)
{
	void *sp;

	if (!crash_installed)
		return;
	sp = malloc(CRASH_STACK);
	if (!sp) {
		stack_missing(ENOMEM);
		return;
	}
	if (!stack_set(sp)) {
		stack_missing(errno);
		free(sp);
		return;
	}
	thread_stack = sp;
}

void crash_thread_end(void)
{
	stack_t ss = { .ss_flags = SS_DISABLE };

	if (!thread_stack)
		return;
	sigaltstack(&ss, NULL);
	free(thread_stack);
	thread_stack = NULL;
}
