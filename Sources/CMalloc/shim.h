// malloc.h from glibc: malloc_trim, which Swift's Glibc module does not bring in
// (Sources/HuddleNode/Node/ProcessMemory.swift).
#ifndef HUDDLE_CMALLOC_SHIM_H
#define HUDDLE_CMALLOC_SHIM_H
#include <malloc.h>
#endif
