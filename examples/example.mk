# example.mk - the build of one example sink against an installed pipe,
# with pkg-config only.  An example's Makefile sets NAME and includes it;
# in the example's folder:
#
#   make                      (PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig if
#                              pipe is not installed under /usr or /usr/local)
#   pipe -s synth -k ./NAME.so
#
# pkg-config gives the header's directory and -fPIC -fvisibility=hidden;
# there is no library to link: plugins never link against pipe.
CC ?= cc
CFLAGS ?= -O2 -g -Wall -Wextra
PIPE_CFLAGS := $(shell pkg-config --cflags pipe-plugin)

$(NAME).so: $(NAME).c
	$(CC) $(CFLAGS) $(PIPE_CFLAGS) -shared -o $@ $<

clean:
	rm -f $(NAME).so

.PHONY: clean
