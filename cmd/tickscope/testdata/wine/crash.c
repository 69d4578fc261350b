/* A Windows program that crashes: it writes through a null pointer. The
   Wine tests run it to show that a crash under Wine ends the process and
   fails the command at once, with Wine's report, instead of starting
   Wine's automatic debugger, which can wait forever holding the test's
   pipes. Test scaffolding, built with x86_64-w64-mingw32-gcc. */
#include <stdio.h>

int main(void)
{
    volatile int *nowhere = 0;
    printf("crashing\n");
    fflush(stdout);
    *nowhere = 1;
    return 0;
}
