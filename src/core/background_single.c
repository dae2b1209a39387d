/* Background work on the page's one thread (background.h), for the browser
 * build without WebAssembly threads (tools/web/web.mk's one-thread page,
 * linked with ASYNCIFY). The run function runs from the browser's event
 * loop, started by a message once bg_submit has returned, and bg_stale
 * gives the browser its thread back after a slice (an asyncify sleep: the
 * run's stack is saved, the browser delivers input and draws frames, the
 * run resumes), so frames keep coming between a forward's layers. Not for
 * the desktop or the threaded page: background.c. */
#include "attnviz/background.h"

#include <emscripten.h>
#include <stdlib.h>

/* How long a run keeps the thread before it yields (ms): well inside a
 * 60 Hz frame, so a frame can come between two slices. */
#define SLICE_MS 10.0

struct BgJob {
    Background *b;
    unsigned long gen; /* the request's */
    int step;          /* results posted so far */
};

struct Background {
    BgRun run;
    void *run_ctx;
    BgNotify notify;
    void *notify_ctx;
    unsigned long gen; /* the newest request's */
    void *req;         /* the waiting request */
    BgFree free_req;
    int has_req;
    BgResult out;      /* the untaken result */
    int has_out;
    Background *next;  /* the live ones, which the pump looks through */
};

/* Under the page's one thread (this file is built without -pthread): */
static Background *live;    /* every Background not yet destroyed, under the one thread */
static Background *running; /* the one whose run is on the stack or suspended, under the one thread */
static void *running_req;   /* its request, and how to free it, under the one thread */
static BgFree running_free; /* under the one thread */
static double slice_start;  /* when the running run last got the thread, under the one thread */

/* The page's side of the one-thread Background (Module.attnvizBg), made
 * at the first use: the browser calls bg_single_pump soon, by a message
 * (timers nest to a 4 ms minimum); the same channel wakes a suspended run,
 * or a suspended open (bg_breathe). After either, a run that suspended has
 * paused emscripten's main loop (asyncify's handleSleep does that):
 * resumed at once, frames are what the slices are for; an open that
 * suspended keeps it paused (the loop's step would act on the state the
 * open is changing) until it ends, and no run starts meanwhile (asyncify
 * keeps one suspended stack): a pump asked for then comes after it. The
 * stack pointer goes back to where the first pump found it when no run is
 * suspended (an abandoned run's frames are dropped). The pump's runs are
 * logged (Module.attnvizBg.log: start and end in performance.now()'s ms,
 * yields; the last 100), and so are the opens that suspended (.opens:
 * their first break, end and yields), which tests/web/single_test.mjs
 * reads. */
EM_JS(void, single_init, (void), {
    if (Module.attnvizBg)
        return;
    var s = Module.attnvizBg = {ch: new MessageChannel(), wake: null, asked: false, base: 0, log: [], t0: 0,
                                yields: 0, breathing: false, busy: 0, open: null, opens: []};
    s.ch.port1.onmessage = function() {
        var w = s.wake;
        s.wake = null;
        if (w) {
            s.breathing = false;
            w();
        } else if (s.asked && !s.breathing) {
            s.asked = false;
            if (!Asyncify.currData) {
                if (!s.base) s.base = stackSave();
                stackRestore(s.base);
                s.t0 = performance.now();
                s.yields = 0;
                s.steps = Module.attnvizSteps | 0; /* the run's first yield waits for a frame too */
            }
            _bg_single_pump();
        }
        if (Asyncify.currData) {
            if (!s.breathing && typeof Browser !== "undefined" && Browser.mainLoop.func &&
                !Browser.mainLoop.scheduler)
                Browser.mainLoop.resume();
            return;
        }
        if (s.t0) {
            s.log.push({start: s.t0, end: performance.now(), yields: s.yields});
            if (s.log.length > 100) s.log.shift();
            s.t0 = 0;
        }
        if (s.open) {
            s.open.end = performance.now();
            s.opens.push(s.open);
            if (s.opens.length > 100) s.opens.shift();
            s.open = null;
        }
        if (s.asked) /* asked for while an open was suspended */
            s.ch.port2.postMessage(0);
    };
});

EM_JS(void, pump_ask, (void), {
    var s = Module.attnvizBg;
    if (!s.asked) {
        s.asked = true;
        s.ch.port2.postMessage(0);
    }
});

static void pump_soon(void)
{
    single_init();
    pump_ask();
}

/* The run gives the thread back; it resumes on the next message, at once
 * when the page has drawn a frame since the last yield or the run's start
 * (Module.attnvizSteps: platform_web.c counts its loop's steps), else
 * after the next animation frame (a busy browser may run the messages
 * before it draws: a frame at least every other slice). */
EM_JS(void, bg_single_yield, (void), {
    Asyncify.handleSleep(function(wake) {
        var s = Module.attnvizBg, steps = Module.attnvizSteps | 0;
        s.yields++;
        s.wake = wake;
        if (steps !== s.steps)
            s.ch.port2.postMessage(0);
        else
            requestAnimationFrame(function() { s.ch.port2.postMessage(0); });
        s.steps = steps;
    });
});

/* Whether the UI thread's long work should give the browser its thread
 * now: it has had it for slice ms in this task (counted from the task's
 * first bg_breathe: the browser's microtasks run once the task has given
 * the thread back, and the count starts again), and it can be suspended:
 * it is the open of a file dropped or picked (platform_web_dropped at the
 * stack's bottom, opening: Module.attnvizOpening; web.mk's ASYNCIFY list
 * covers the calls from there down to here), and nothing else is
 * suspended (a run's stack: asyncify keeps one). Anywhere else (the main
 * loop's step, main, a run, which yields in bg_stale) it goes on. */
EM_JS(int, breathe_due, (double slice), {
    var s = Module.attnvizBg, now = performance.now();
    if (!s.busy) {
        s.busy = now;
        queueMicrotask(function() { s.busy = 0; });
    }
    var st = Asyncify.exportCallStack;
    return now - s.busy >= slice && Module.attnvizOpening === true && st.length === 1 &&
           st[0] === "platform_web_dropped" && !Asyncify.currData;
});

/* The open gives the thread back until the next animation frame has been
 * drawn (resumed by a message posted from it), the main loop paused. */
EM_JS(void, bg_single_breathe, (void), {
    Asyncify.handleSleep(function(wake) {
        var s = Module.attnvizBg;
        if (!s.open) s.open = {start: s.busy, end: 0, yields: 0};
        s.open.yields++;
        s.breathing = true;
        s.wake = wake;
        requestAnimationFrame(function() { s.ch.port2.postMessage(0); });
    });
});

static BgBreatheWatch watch; /* bg_watch_breathe's, under the one thread */
static void *watch_ctx;      /* under the one thread */

void bg_watch_breathe(BgBreatheWatch fn, void *ctx)
{
    watch = fn;
    watch_ctx = ctx;
}

void bg_breathe(void)
{
    if (watch)
        watch(watch_ctx);
    single_init();
    if (breathe_due(SLICE_MS))
        bg_single_breathe();
}

/* No thread of its own here: a model's open stays on the UI thread,
 * broken up by bg_breathe. */
int bg_threaded(void)
{
    return 0;
}

/* No thread to wait for: work is done whole here. */
void bg_set_may_wait(int may)
{
    (void)may;
}

int bg_may_wait(void)
{
    return 0;
}

/* A suspended run that will not resume (bg_destroy): its saved state
 * freed; its stack frames go at the next pump. */
EM_JS(void, abandon_suspended, (void), {
    var s = Module.attnvizBg;
    if (s) s.wake = null;
    if (Asyncify.currData) {
        _free(Asyncify.currData);
        Asyncify.currData = null;
    }
});

static void free_result(BgResult *r)
{
    if (r->free_data && r->data)
        r->free_data(r->data);
}

Background *bg_create(BgRun run, void *run_ctx, BgNotify notify, void *notify_ctx)
{
    Background *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->run = run;
    b->run_ctx = run_ctx;
    b->notify = notify;
    b->notify_ctx = notify_ctx;
    b->next = live;
    live = b;
    return b;
}

/* The waiting request and the untaken result freed, a new generation. */
static unsigned long next_gen(Background *b)
{
    if (b->has_req && b->free_req && b->req)
        b->free_req(b->req);
    if (b->has_out)
        free_result(&b->out);
    b->has_req = b->has_out = 0;
    b->req = NULL;
    return ++b->gen;
}

unsigned long bg_submit(Background *b, void *request, BgFree free_request)
{
    unsigned long gen = next_gen(b);
    b->req = request;
    b->free_req = free_request;
    b->has_req = 1;
    pump_soon();
    return gen;
}

void bg_cancel(Background *b)
{
    next_gen(b);
}

int bg_take(Background *b, BgResult *out)
{
    int got = b->has_out && b->out.gen == b->gen;
    if (got)
        *out = b->out;
    else if (b->has_out)
        free_result(&b->out);
    b->has_out = 0;
    return got;
}

/* A run suspended in bg_stale cannot be finished here (only the browser
 * resumes it, and the caller frees the run's state when this returns): it
 * is dropped where it stands, its request freed. What it had allocated
 * itself leaks; it happens when a model is closed mid-forward. */
void bg_destroy(Background *b)
{
    if (!b)
        return;
    for (Background **p = &live; *p; p = &(*p)->next)
        if (*p == b) {
            *p = b->next;
            break;
        }
    if (running == b) {
        abandon_suspended();
        running = NULL;
        if (running_free && running_req)
            running_free(running_req);
        pump_soon(); /* another Background's waiting request */
    }
    next_gen(b);
    free(b);
}

/* Run the waiting requests, in the live list's order, one run at a time
 * (asyncify saves one suspended stack). Called from the browser's event
 * loop by pump_soon's message, never from inside a run or the main loop. */
EMSCRIPTEN_KEEPALIVE void bg_single_pump(void)
{
    if (running)
        return;
    for (;;) {
        Background *b = live;
        while (b && !b->has_req)
            b = b->next;
        if (!b)
            return;
        BgJob job = {b, b->gen, 0};
        running = b;
        running_req = b->req;
        running_free = b->free_req;
        b->has_req = 0;
        b->req = NULL;
        slice_start = emscripten_get_now();
        b->run(b->run_ctx, running_req, &job);
        running = NULL;
        if (running_free && running_req)
            running_free(running_req);
    }
}

/* The run's cancellation point is where it yields: once it has had the
 * thread for a slice, the browser gets it, and a request submitted
 * meanwhile makes the run stale when it resumes. */
int bg_stale(const BgJob *job)
{
    Background *b = job->b;
    if (running == b && emscripten_get_now() - slice_start >= SLICE_MS) {
        bg_single_yield();
        slice_start = emscripten_get_now();
    }
    return b->gen != job->gen;
}

int bg_post(BgJob *job, void *result, BgFree free_data, int last)
{
    Background *b = job->b;
    BgResult r = {result, free_data, job->gen, job->step++, last};
    if (b->gen != job->gen) {
        free_result(&r);
        return -1;
    }
    if (b->has_out)
        free_result(&b->out);
    b->out = r;
    b->has_out = 1;
    if (b->notify)
        b->notify(b->notify_ctx);
    return 0;
}
