/*
 * check.h - `pipe check-plugin PATH.so[:ARGS]`: load a plugin, show what
 * the loader sees, run it on a synthetic recording as its kind allows
 * (a sink on synth, a codec round trip, a byte source on a recorded file,
 * a record source to its end), and report what it did and every breach
 * of the plugin contract.
 */
#ifndef PIPE_CHECK_H
#define PIPE_CHECK_H

struct conf;

/* Report on stdout; returns the exit status: 0 when the plugin loaded,
 * ran and breached nothing, 1 otherwise. */
int check_plugin(const struct conf *conf, const char *spec);

#endif
