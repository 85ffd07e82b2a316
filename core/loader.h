/*
 * loader.h - loading one plugin .so: dlopen(RTLD_NOW | RTLD_LOCAL), the
 * `pipe_plugin` descriptor, ABI and size checks, and the host's own copy
 * of the descriptor and parameter table at the host's struct sizes.
 */
#ifndef PIPE_LOADER_H
#define PIPE_LOADER_H

#include "pipe_plugin.h"

struct pipe_err;

struct loaded {
	const struct pipe_plugin *plugin; /* &desc: read this, not the .so's */
	struct pipe_plugin desc;          /* the .so's descriptor, zero-extended
					     to the host's size */
	struct pipe_param *params;        /* owned copy of its table at the
					     host's element size, or NULL */
	void *handle;                     /* dlopen handle */
	char *path;                       /* owned copy */
	int fd;                           /* set-id: the checked file, open
					     while loaded, else -1 */
};

/*
 * Load `path`; `expect_kind` 0 accepts any kind.  Messages name the file:
 *   plugin 'x.so' speaks ABI 2, this pipe speaks ABI 1
 *   cannot load plugin 'x.so': <dlerror>
 *   plugin 'x.so' has no 'pipe_plugin' symbol
 * On success *out is owned by the caller (loader_close).
 */
int loader_open(struct loaded **out, const char *path, uint32_t expect_kind,
		struct pipe_err *err);
void loader_close(struct loaded *l); /* NULL is a no-op */
/* "source", "codec", "sink" */
const char *loader_kind_name(uint32_t kind);


#endif
