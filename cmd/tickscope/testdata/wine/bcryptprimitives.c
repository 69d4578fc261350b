/*
 * Test scaffolding, not part of tickscope: Wine 8.0 has no
 * bcryptprimitives.dll, and Go 1.22+ Windows binaries call its ProcessPrng at
 * start-up. This one-function stand-in forwards to RtlGenRandom
 * (SystemFunction036 in advapi32). The Wine tests build it with
 *   x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 * and copy it into the test prefix's system32 (CONTRIBUTING.md: the Windows binary under Wine).
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, chunk))
			return FALSE;
		data += chunk;
		len -= chunk;
	}
	return TRUE;
}
