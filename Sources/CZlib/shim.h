// The system zlib for permessage-deflate (RFC 7692): Debian's `zlib1g-dev`.
// `deflateInit2`/`inflateInit2` are macros that pass the library's version and the stream's size; Swift cannot
// call a function-like macro, so they are wrapped here.
#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

#if !__has_include(<zlib.h>)
#error "Tether's compression needs the zlib development headers: install zlib1g-dev (apt-get install zlib1g-dev)"
#else
#include <zlib.h>

static inline int tether_deflateInit2(z_streamp stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY);
}

static inline int tether_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}
#endif
#endif
