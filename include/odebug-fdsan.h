/* SPDX-License-Identifier: MIT */
/*
 * odebug-fdsan.h - bionic's fdsan owner-tag API, as libodebug offers it
 * on glibc (odebug-fd(7)).  Declared weak: a program that tests the
 * function's address before calling it runs unchanged, at no cost,
 * where libodebug is not loaded, and gets the checks where it is.
 */
#ifndef ODEBUG_FDSAN_H
#define ODEBUG_FDSAN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* bionic's owner types (the tag's top byte). */
enum android_fdsan_owner_type {
	ANDROID_FDSAN_OWNER_TYPE_GENERIC_00 = 0,
	ANDROID_FDSAN_OWNER_TYPE_GENERIC_FF = 255,
	ANDROID_FDSAN_OWNER_TYPE_FILE = 1,
	ANDROID_FDSAN_OWNER_TYPE_DIR = 2,
	ANDROID_FDSAN_OWNER_TYPE_UNIQUE_FD = 3,
	ANDROID_FDSAN_OWNER_TYPE_SQLITE = 4,
	ANDROID_FDSAN_OWNER_TYPE_FILEINPUTSTREAM = 5,
	ANDROID_FDSAN_OWNER_TYPE_FILEOUTPUTSTREAM = 6,
	ANDROID_FDSAN_OWNER_TYPE_RANDOMACCESSFILE = 7,
	ANDROID_FDSAN_OWNER_TYPE_PARCELFILEDESCRIPTOR = 8,
	ANDROID_FDSAN_OWNER_TYPE_ART_FDFILE = 9,
	ANDROID_FDSAN_OWNER_TYPE_DATAGRAMSOCKETIMPL = 10,
	ANDROID_FDSAN_OWNER_TYPE_SOCKETIMPL = 11,
	ANDROID_FDSAN_OWNER_TYPE_ZIPARCHIVE = 12,
	ANDROID_FDSAN_OWNER_TYPE_NATIVE_HANDLE = 13,
	ANDROID_FDSAN_OWNER_TYPE_PARCEL = 14,
};

#define ODEBUG_FDSAN_WEAK __attribute__((weak))

ODEBUG_FDSAN_WEAK uint64_t android_fdsan_create_owner_tag(enum android_fdsan_owner_type type,
							  uint64_t tag);
ODEBUG_FDSAN_WEAK void android_fdsan_exchange_owner_tag(int fd, uint64_t expected_tag,
							uint64_t new_tag);
ODEBUG_FDSAN_WEAK int android_fdsan_close_with_tag(int fd, uint64_t tag);
ODEBUG_FDSAN_WEAK uint64_t android_fdsan_get_owner_tag(int fd);
ODEBUG_FDSAN_WEAK const char *android_fdsan_get_tag_type(uint64_t tag);
ODEBUG_FDSAN_WEAK uint64_t android_fdsan_get_tag_value(uint64_t tag);

#ifdef __cplusplus
}
#endif

#endif /* ODEBUG_FDSAN_H */
