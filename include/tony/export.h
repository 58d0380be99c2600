// Copyright libtony authors.
//
// TONY_EXPORT marks libtony's public API. libtony is built with hidden visibility and a linker
// version script (cmake/libtony.map): the shared library exports the declarations marked here
// and nothing else — no symbol of its dependencies (protobuf, gRPC, curl, ...) and none of its
// internals (docs/embedding.md).
//
// Stability: stable (tony/version.h).

#ifndef TONY_EXPORT_H_
#define TONY_EXPORT_H_

#define TONY_EXPORT __attribute__((visibility("default")))
// For the library's own sources: the definition of a public class's nested `Impl` (which would
// otherwise inherit the class's default visibility), `class TONY_NO_EXPORT Foo::Impl {`.
#define TONY_NO_EXPORT __attribute__((visibility("hidden")))

#endif  // TONY_EXPORT_H_
