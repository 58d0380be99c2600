// Copyright libtony authors.
//
// Giving back resident memory that costs nothing to get again.
//
// Thread-safe: other threads may run while it does; what they touch is paged back in.

#ifndef TONY_COMMON_RESIDENT_H_
#define TONY_COMMON_RESIDENT_H_

namespace tony {

// Drops this process's clean pages of read-only, private file mappings (code and constant data of
// the executable and, unless `own_binary_only`, of the shared libraries) from its resident set.
// Start-up code runs once, and the kernel maps up to 64 KB around every page a fault brings in,
// so after start-up much of what is resident never runs again; a page that does is faulted back
// in from the page cache. A mapping with anonymous pages (relocated RELRO data, copied on write)
// is left alone: its pages differ from the file's. The peak (VmHWM) is recorded by the kernel
// when pages are dropped, so call it at the end of a phase, before the next one's work.
void ReleaseReadOnlyFilePages(bool own_binary_only = false);

}  // namespace tony

#endif  // TONY_COMMON_RESIDENT_H_
