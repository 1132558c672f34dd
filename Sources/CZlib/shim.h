// zlib, as the system provides it (Debian: zlib1g-dev; Apple platforms: the SDK).
// InvisoOffline uses its raw DEFLATE for SecureChats' Fairy Tale encoding.
#include <zlib.h>
