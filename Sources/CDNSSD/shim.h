// dns_sd.h comes from Avahi's compat library on Linux (libavahi-compat-libdnssd-dev, which
// installs it under avahi-compat-libdns_sd/) and from the SDK on macOS. The header is found
// here rather than through pkg-config because that .pc file adds -D_REENTRANT, a flag SwiftPM
// refuses with a warning on every build.
#ifndef HUDDLE_CDNSSD_SHIM_H
#define HUDDLE_CDNSSD_SHIM_H
#if __has_include(<avahi-compat-libdns_sd/dns_sd.h>)
#include <avahi-compat-libdns_sd/dns_sd.h>
#else
#include <dns_sd.h>
#endif
#endif
