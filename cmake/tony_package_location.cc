// Copyright libtony authors.
//
// Compiled into every program that links tony::tony from an installed package (tonyConfig.cmake
// adds it, with the package's directories as TONY_PACKAGE_BINDIR and TONY_PACKAGE_DATADIR):
// the library does not know where it was installed, so the program tells it where tony-am,
// tony-executor and the runtime bundle are (libtony.so refers to these weakly; the linker exports
// the program's definitions to it). Weak: several targets of one program may each carry a copy.

extern "C" __attribute__((weak)) const char* tony_package_bindir() { return TONY_PACKAGE_BINDIR; }
extern "C" __attribute__((weak)) const char* tony_package_datadir() { return TONY_PACKAGE_DATADIR; }
