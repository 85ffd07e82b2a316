#!/usr/bin/env bash
# tests/fuzz/seeds.sh BUILD OUT - the seed corpora of every harness, made
# by the build's own pipe (small synth recordings with each codec, the
# transform, dictionaries, a cut and the golden files) and cut into what
# each harness takes: OUT/container, OUT/meta, OUT/transform, OUT/decode,
# OUT/codec_NAME, OUT/params, OUT/conf, OUT/symbolizer, OUT/elfsyms;
# and OUT/pdread: perf.data files of our own, written by the perfdata
# sink and, where perf record works, by perf (file mode, pipe mode,
# compressed, two events with an id index).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$1" && pwd) OUT=$2
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
PIPE="$B/pipe"
mkdir -p "$OUT"/{container,meta,transform,decode,params,conf,symbolizer,elfsyms}
cd "$OUT/container"
src="synth:300,cpus=3,pids=3,seed=4,depth=6"
n=0
for c in none:block=4K none:block=4K,transform=on zlib:block=4K \
	 zlib:block=8K,transform=on lzma:block=4K,transform=on lzma:block=4K \
	 zstd:block=4K,transform=off zstd:block=4K,dict=on,dict_size=1K; do
	name=${c%%:*}
	[ "$name" = none ] || [ -f "$B/plugins/codec_$name.so" ] || continue
	n=$((n + 1))
	"$PIPE" -q -s "$src" -c "$c" -k "file:s$n.dat,force=on" 2>/dev/null ||
		{ echo "seeds: cannot record -c $c" >&2; exit 1; }
done
"$PIPE" -q -s synth:2000,cpus=2,seed=5 -c none:block=4K -k file:big.dat,force=on
head -c $(( $(stat -c %s big.dat) * 2 / 3 )) big.dat > cut.dat
cp "$TOP"/tests/golden/*.dat .
python3 "$TOP/tests/fuzz/seeds.py" "$OUT"
# the parameter and plugins.conf parsers
printf 'out.dat,force=on,level=-5\0path,block=8K,flush=10ms,cpus=0+1+2,mode=on' > "$OUT/params/a"
printf '\0a\\,b\\+c\\=d\\\\e,level=19,block=4M,flush=1500us,force=off' > "$OUT/params/b"
printf 'level=3\0:level=x,,=,cpus=++,flush=1h' > "$OUT/params/c"
cp "$TOP/plugins.conf" "$OUT/conf/plugins.conf"
printf '# comment\nsink report build/plugins/sink_report.so sort=period\ncodec zstd ./z.so 9\n\nsource x /abs/x.so\n' > "$OUT/conf/b"
printf 'codec a a.so\ncodec a b.so\nbogus\nsink\n' > "$OUT/conf/c"
# ELF files: the fixtures (PLTs of every kind, MiniDebugInfo) and a plugin
for f in fx_pie fx_nopie fx_dbg libfx.so libfx_stripped.so fx_names_ibt \
	fx_pltgot fx_ifunc fx_inline_mini; do
	[ -f "$B/tests/fixtures/$f" ] && cp "$B/tests/fixtures/$f" "$OUT/elfsyms/$f"
done
cp "$B/plugins/codec_none.so" "$OUT/elfsyms/"
# perf.data: made by hand, by the perfdata sink, by perf record
if [ -f "$B/plugins/sink_perfdata.so" ]; then
	mkdir -p "$OUT/pdread"
	cd "$OUT/pdread"
	T=$TOP/tests/e2e/4099-perfdata-lib/pdtool.py
	python3 "$T" make own.data
	python3 "$T" make --pipe own-pipe.data
	python3 "$T" make --zstd own-zstd.data
	python3 "$T" make --pipe --zstd own-pipe-zstd.data
	python3 "$T" make --id-index own-index.data
	python3 "$T" make --pipe --id-index --late own-index-late.data
	src=$OUT/container/s1.dat
	"$PIPE" -q -s "file:$src" -k perfdata:sink.data,force=on
	"$PIPE" -q -s "file:$src" -k perfdata:- > sink-pipe.data
	"$PIPE" -q -s "file:$src" -k perfdata:sink-z.data,compress=3,force=on
	"$PIPE" -q -s "file:$src" -k perfdata:sink-z2.data,compress=1,record=compressed2,force=on
	"$PIPE" -q -s "file:$src" -k perfdata:-,compress=1 > sink-pipe-z.data
	# perf's own, small: a short run of the bundled workload
	burn=$B/tests/workloads/burn
	if command -v perf >/dev/null && [ -x "$burn" ] &&
	   perf record -B -q -F 2000 -e cpu-clock,task-clock -o perf-two.data -- "$burn" 20 1 >/dev/null 2>&1; then
		perf record -B -q -F 2000 -z -g -o perf-z.data -- "$burn" 20 1 >/dev/null 2>&1 || true
		perf record -B -q -F 2000 -o - -- "$burn" 20 1 > perf-pipe.data 2>/dev/null || true
	fi
	rm -f ./*.old
fi
ls "$OUT"/*/ | grep -vc ':$' >/dev/null
