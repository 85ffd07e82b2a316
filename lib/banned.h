/*
 * banned.h - functions we never call; using one is a compile error.
 * Included by every core and plugin file through the Makefile (-include).
 */
#ifndef PIPE_BANNED_H
#define PIPE_BANNED_H

/* declare the real functions first, so the macros below only catch uses */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BANNED(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(x, y) BANNED(strcpy)
#undef strcat
#define strcat(x, y) BANNED(strcat)
#undef sprintf
#define sprintf(...) BANNED(sprintf)
#undef strtok
#define strtok(x, y) BANNED(strtok)
#undef atoi
#define atoi(x) BANNED(atoi)
#undef localtime
#define localtime(x) BANNED(localtime)
#undef gmtime
#define gmtime(x) BANNED(gmtime)

#endif
