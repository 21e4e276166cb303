/* LongPipe's C API: the functions of liblongpipe.so a program or tool may call itself (with
   dlsym, or by linking the library). Everything else the library exports is an interposed PVM or
   MPI entry point; its own C++ internals are hidden (libshim/shared/liblongpipe.map). */
#ifndef LONGPIPE_H
#define LONGPIPE_H

#ifdef __cplusplus
extern "C" {
#endif

#define LONGPIPE_API __attribute__((visibility("default")))

/* The library's version, "MAJOR.MINOR.PATCH": the project's version (CMakeLists.txt). */
LONGPIPE_API const char* longpipe_version(void);

/* The version of the wire protocol the library speaks; peers speaking another one are refused. */
LONGPIPE_API int longpipe_protocol_version(void);

#ifdef __cplusplus
}
#endif

#endif
