/* The forward pass's second thread (workers.h): started once, given jobs by
 * sequence number; it spins about a tenth of a millisecond after a job
 * (jobs come in bursts: a keystroke's forward, the bench) before it sleeps
 * on a condition variable, so a burst pays no wake-up. A job is claimed
 * once, by the worker when it starts it or by the caller when the caller
 * has finished its own half first (it then runs the other half too): a
 * worker that another process keeps off the CPU no longer holds the caller
 * up (the GPT-2 keystroke took 5 times as long with the other core busy),
 * and the worker skips the job it lost. */
#include "attnviz/workers.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

enum { SPIN = 20000 }; /* pause instructions: about 0.1 ms */

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;   /* guards the sleep */
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t turn = PTHREAD_MUTEX_INITIALIZER; /* one caller at a time */
static int started;              /* set once under once */
static void (*job_fn)(void *);   /* set under turn, then posted */
static void *job_arg;            /* set under turn, then posted */
static atomic_uint posted, done; /* the last job posted, the last finished */
static atomic_uint claimed;      /* the last job claimed (by the worker or its caller) */
static _Thread_local int in_job; /* this thread runs a job's half: a job inside it runs here */

/* Claim job seq (the one after the last claimed); 1 when this thread got it. */
static int claim(unsigned seq)
{
    unsigned before = seq - 1;
    return atomic_compare_exchange_strong(&claimed, &before, seq);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *worker(void *unused)
{
    (void)unused;
    unsigned seen = 0;
    for (;;) {
        for (int k = 0; k < SPIN && atomic_load(&posted) == seen; k++)
            relax();
        if (atomic_load(&posted) == seen) {
            pthread_mutex_lock(&mu);
            while (atomic_load(&posted) == seen)
                pthread_cond_wait(&cv, &mu);
            pthread_mutex_unlock(&mu);
        }
        seen = atomic_load(&posted);
        if (claim(seen)) {
            in_job = 1;
            job_fn(job_arg);
            in_job = 0;
            atomic_store(&done, seen);
        }
    }
    return NULL;
}

static void start(void)
{
    pthread_t t;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0)
        return;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &at, worker, NULL) == 0;
    pthread_attr_destroy(&at);
}

int workers_run2(void (*fn)(void *), void *a, void *b)
{
    pthread_once(&once, start);
    if (!started || in_job)
        return -1;
    pthread_mutex_lock(&turn);
    job_fn = fn;
    job_arg = b;
    pthread_mutex_lock(&mu);
    unsigned seq = atomic_load(&posted) + 1;
    atomic_store(&posted, seq); /* after the job: the worker reads it after this */
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    in_job = 1;
    fn(a);
    int mine = claim(seq);
    if (mine) /* the worker has not started: its half here too */
        fn(b);
    in_job = 0;
    if (!mine) { /* the worker is on it: its half is about as long as this one was */
        for (int k = 0; atomic_load(&done) != seq; k++)
            if (k < SPIN)
                relax();
            else
                sched_yield(); /* it was taken off the CPU mid-job */
    }
    pthread_mutex_unlock(&turn);
    return 0;
}
