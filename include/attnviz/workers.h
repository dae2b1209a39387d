/* A second thread kept between forward passes: handing it half of a small
 * forward (tens of microseconds) must cost far less than creating a thread
 * (about 30 µs). It waits spinning for a little while after each job, then
 * sleeps. Plain C11 with pthreads. */
#ifndef ATTNVIZ_WORKERS_H
#define ATTNVIZ_WORKERS_H

/* Run fn(a) on this thread and fn(b) on the worker, or here after fn(a)
 * when the worker has not started it by then; return when both are done
 * (0). -1 when the worker cannot be started, or when called from inside a
 * job's half (the worker would wait for itself): nothing ran. One caller
 * at a time (others wait their turn). */
int workers_run2(void (*fn)(void *), void *a, void *b);

#endif
