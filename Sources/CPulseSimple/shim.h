// PulseAudio's simple API (libpulse-dev on Debian): one blocking record stream, which is all a
// listening node needs. PipeWire serves it too (pipewire-pulse). Found without pkg-config for the
// same reason as CDNSSD: libpulse-simple.pc adds -D_REENTRANT, which SwiftPM warns about on every
// build.
#ifndef HUDDLE_CPULSESIMPLE_SHIM_H
#define HUDDLE_CPULSESIMPLE_SHIM_H
#include <pulse/simple.h>
#include <pulse/error.h>
#endif
