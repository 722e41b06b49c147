#!/bin/sh
# The servers of servers.py rebuilt with AddressSanitizer and with
# ThreadSanitizer (gcc), from source trees at the versions Debian 12 ships
# (nginx 1.22.1: tag release-1.22.1; memcached 1.6.18: tag 1.6.18), for
# its --rebuilt configurations.  nginx without the rewrite and gzip
# modules (no PCRE or zlib needed; a static file needs neither).
# usage: rebuild-servers.sh NGINX_SRC MEMCACHED_SRC OUTDIR
# Prints the --rebuilt arguments.
set -eu
nginx_src=$(readlink -f "$1") memcached_src=$(readlink -f "$2")
mkdir -p "$3"
out=$(readlink -f "$3")
(cd "$memcached_src" && [ -x configure ] || ./autogen.sh) >/dev/null
for san in address thread; do
	case $san in address) tag=asan ;; thread) tag=tsan ;; esac
	flags="-O2 -g -fsanitize=$san -fno-omit-frame-pointer"
	rm -rf "$out/nginx-$tag" "$out/memcached-$tag"
	cp -r "$nginx_src" "$out/nginx-$tag"
	(cd "$out/nginx-$tag" && ./auto/configure --without-http_rewrite_module \
		--without-http_gzip_module --with-cc-opt="$flags" \
		--with-ld-opt="-fsanitize=$san" >configure.log 2>&1 &&
		make -j"$(nproc)" >make.log 2>&1)
	mkdir -p "$out/memcached-$tag"
	(cd "$out/memcached-$tag" && "$memcached_src/configure" CFLAGS="$flags" \
		LDFLAGS="-fsanitize=$san" >configure.log 2>&1 &&
		make -j"$(nproc)" memcached >make.log 2>&1)
	echo "--rebuilt nginx:$tag=$out/nginx-$tag/objs/nginx" \
		"--rebuilt memcached:$tag=$out/memcached-$tag/memcached"
done
