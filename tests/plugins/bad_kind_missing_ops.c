/*
 * bad_kind_missing_ops.c - a broken plugin for the loader tests: a sink
 * with neither `consume` (record sink) nor `write` (byte sink).
 */
#include "pipe_plugin.h"
#include "stub.h"

PIPE_PLUGIN_SINK(
	.name = "bad_kind_missing_ops",
	.summary = "a sink that can take nothing",
	.version = "0",
	.open = stub_open,
	.close = stub_close
);
