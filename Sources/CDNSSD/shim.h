// The DNS Service Discovery API: Apple's <dns_sd.h> on Apple platforms (in libSystem), and
// avahi's compatibility library on Linux (Debian libavahi-compat-libdnssd-dev, which
// installs the header as /usr/include/dns_sd.h and the library as libdns_sd; the
// InvisoNearby target links it on Linux). Only the subset both implement is used: see
// Sources/InvisoNearby/Discovery/DNSSD.swift.
#include <dns_sd.h>
