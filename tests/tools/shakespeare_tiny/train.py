#!/usr/bin/python3
"""Trains shakespeare-tiny, the small language model attnviz ships
(assets/models/shakespeare-tiny/), from input.txt beside this script.

  input.txt   tinyshakespeare (40,000 lines of Shakespeare's plays, public
              domain), byte for byte as github.com/karpathy/char-rnn holds
              it (data/tinyshakespeare/input.txt, sha256 86c4e6aa…565ed;
              that repository is MIT-licensed, the text is public domain)

What it does, every step deterministic (the same bytes on the same torch):
  1. splits the text at a line boundary: the first 90 % trains, the last
     10 % is held out (never seen by the tokenizer or the model);
  2. trains a byte-level BPE on the training part: GPT-2's pre-tokenizer
     pattern (the text is ASCII, so its letter and digit classes are
     [A-Za-z] and [0-9]), 256 bytes + merges + <|endoftext|> = VOCAB ids;
     ties between equally frequent pairs go to the smaller pair, so the
     merges are the same every run;
  3. encodes both parts as attnviz's BPE does (merges by rank per piece);
  4. a bigram model of the training tokens (add-k smoothing, k the best of
     a few on the held-out part: the strongest bigram we can fairly name);
  5. trains a GPT-2 (2 layers, 4 heads, 128 wide, 128 positions, tied
     embeddings, the positions starting as sinusoids) with AdamW on windows
     of the training tokens; a share of the windows repeat a span (a text
     span again, then its own continuation; or <|endoftext|> and random
     tokens, repeated, their first copy not scored), many in the first half
     of the steps and fewer after, so that the copying circuit (a
     previous-token head and an induction head) forms; every 100 steps it
     prints the best previous and induction score of attnviz's probe
     (<|endoftext|>, 25 random ids, the same again);
  6. prints the held-out cross-entropy of the model and of the bigram on the
     same positions (nats per token), and writes the Hugging Face GPT-2
     folder: config.json, model.safetensors (float32), vocab.json,
     merges.txt.

Run (about 20 minutes on 2 cores shared with other work):
  /usr/bin/python3 tests/tools/shakespeare_tiny/train.py [OUT_DIR]
OUT_DIR defaults to assets/models/shakespeare-tiny. --quick trains 40 steps
(a smoke test of the whole path, not the shipped model)."""
import collections
import json
import math
import os
import re
import struct
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

VOCAB = 2048          # 256 bytes, 1791 merges, <|endoftext|>
N_LAYER, N_HEAD, N_EMBD, N_CTX = 2, 4, 128, 128
STEPS, BATCH, LR, WARMUP = 2000, 32, 3e-3, 100
# the share of windows with a text span repeated, and with random ids repeated:
# many at first (the copying circuit forms), fewer later (the language)
P_TEXT_REPEAT, P_RANDOM_REPEAT, P_RANDOM_LATER = 0.15, 0.6, 0.25
SEED = 1234

# GPT-2's pre-tokenizer pattern on ASCII text (\p{L} = [A-Za-z], \p{N} = [0-9])
PRE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""")


# ---- the byte-level BPE ------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte -> printable character table (as make_gpt2_fixtures.py)."""
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) \
        + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def train_bpe(text, n_merges):
    """The merges [(a, b)] of ids, most frequent pair first (ties: smaller pair)."""
    counts = collections.Counter(PRE.findall(text))
    words = [list(w.encode()) for w in counts]
    freq = list(counts.values())
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, w in enumerate(words):
        for p in zip(w, w[1:]):
            pairs[p] += freq[i]
            where[p].add(i)
    merges = []
    for new in range(256, 256 + n_merges):
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] <= 0:
            break
        merges.append(best)
        for i in sorted(where.pop(best)):
            w = words[i]
            for p in zip(w, w[1:]):
                pairs[p] -= freq[i]
            out, j = [], 0
            while j < len(w):
                if j + 1 < len(w) and (w[j], w[j + 1]) == best:
                    out.append(new)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            words[i] = out
            for p in zip(out, out[1:]):
                pairs[p] += freq[i]
                where[p].add(i)
        del pairs[best]
    return merges


def encoder(merges):
    """text -> ids, as GPT-2's tokenizer: each piece's lowest-ranked pair merged first."""
    rank = {p: r for r, p in enumerate(merges)}
    cache = {}

    def piece(s):
        w = list(s.encode())
        while len(w) > 1:
            p = min(zip(w, w[1:]), key=lambda q: rank.get(q, 1 << 30))
            if p not in rank:
                break
            new, out, j = 256 + rank[p], [], 0
            while j < len(w):
                if j + 1 < len(w) and (w[j], w[j + 1]) == p:
                    out.append(new)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            w = out
        return w

    def encode(text):
        ids = []
        for s in PRE.findall(text):
            if s not in cache:
                cache[s] = piece(s)
            ids.extend(cache[s])
        return ids
    return encode


def token_bytes(merges):
    tb = [bytes([b]) for b in range(256)]
    for a, b in merges:
        tb.append(tb[a] + tb[b])
    return tb


# ---- the bigram --------------------------------------------------------------------

def bigram_loss(train, held, vocab, pairs_at):
    """Mean -log p(next | previous) over held's pairs at pairs_at, add-k smoothed;
    the best k of a few and its loss."""
    t = torch.tensor(train)
    counts = torch.zeros(vocab, vocab, dtype=torch.float64)
    counts.index_put_((t[:-1], t[1:]), torch.ones(len(t) - 1, dtype=torch.float64),
                      accumulate=True)
    h = torch.tensor(held)
    prev, nxt = h[pairs_at - 1], h[pairs_at]
    best = None
    for k in (1.0, 0.3, 0.1, 0.03, 0.01, 0.003):
        p = (counts[prev, nxt] + k) / (counts[prev].sum(1) + k * vocab)
        loss = -p.log().mean().item()
        if best is None or loss < best[1]:
            best = (k, loss)
    return best


# ---- the model: GPT-2 as Hugging Face's modeling_gpt2 computes it -------------------

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        C = N_EMBD
        self.ln_1, self.ln_2 = nn.LayerNorm(C, eps=1e-5), nn.LayerNorm(C, eps=1e-5)
        self.c_attn, self.attn_proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.c_fc, self.mlp_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
        mask = torch.tril(torch.ones(N_CTX, N_CTX, dtype=torch.bool))
        self.register_buffer('mask', mask, persistent=False)

    def forward(self, x, maps=None):
        B, T, C = x.shape
        d = C // N_HEAD
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (z.view(B, T, N_HEAD, d).transpose(1, 2) for z in (q, k, v))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        s = s.masked_fill(~self.mask[:T, :T], float('-inf'))
        a = s.softmax(-1)
        if maps is not None:
            maps.append(a)
        z = (a @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.attn_proj(z)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate='tanh'))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)
        self.wpe = nn.Embedding(N_CTX, N_EMBD)
        self.h = nn.ModuleList(Block() for _ in range(N_LAYER))
        self.ln_f = nn.LayerNorm(N_EMBD, eps=1e-5)
        for name, p in self.named_parameters():
            if name.endswith('bias'):
                nn.init.zeros_(p)
            elif 'ln' in name:
                nn.init.ones_(p)
            else:  # GPT-2's init, the residual projections scaled by depth
                std = 0.02 / math.sqrt(2 * N_LAYER) if 'proj' in name else 0.02
                nn.init.normal_(p, 0.0, std)
        # positions start as sinusoids (as large as the token embeddings):
        # one position to the previous is then a rotation, which the first
        # layer's queries and keys learn quickly (the previous-token head)
        pos = torch.arange(N_CTX, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, N_EMBD, 2, dtype=torch.float32) * (-math.log(1e4) / N_EMBD))
        with torch.no_grad():
            self.wpe.weight[:, 0::2] = torch.sin(pos * freq) * 0.02 * math.sqrt(2)
            self.wpe.weight[:, 1::2] = torch.cos(pos * freq) * 0.02 * math.sqrt(2)

    def forward(self, ids, maps=None):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T))
        for b in self.h:
            x = b(x, maps)
        return self.ln_f(x) @ self.wte.weight.T


# ---- the training windows -------------------------------------------------------------

def window(data, g, eot, p_random):
    """One row of N_CTX + 1 ids and its targets' mask (False: not scored)."""
    n = N_CTX + 1
    r = torch.rand(1, generator=g).item()
    keep = torch.ones(n, dtype=torch.bool)
    if r < p_random:  # <|endoftext|>, random ids, the same ids again and again
        m = int(torch.randint(8, 41, (1,), generator=g))
        span = torch.randint(0, VOCAB, (m,), generator=g).tolist()
        row = [eot] + span * (n // m + 1)
        keep[:m + 1] = False
        return torch.tensor(row[:n]), keep
    i = int(torch.randint(0, len(data) - 2 * n, (1,), generator=g))
    if r < p_random + P_TEXT_REPEAT:  # A, other text, A again, then A's continuation
        k = int(torch.randint(8, 61, (1,), generator=g))
        gap = int(torch.randint(0, 41, (1,), generator=g))
        j = int(torch.randint(0, len(data) - n, (1,), generator=g))
        row = data[i:i + k] + data[j:j + gap] + data[i:i + n]
        return torch.tensor(row[:n]), keep
    return torch.tensor(data[i:i + n]), keep


def batch(data, g, eot, p_random):
    rows, keeps = zip(*(window(data, g, eot, p_random) for _ in range(BATCH)))
    x = torch.stack(rows)
    y = x[:, 1:].clone()
    y[~torch.stack(keeps)[:, 1:]] = -100
    return x[:, :-1], y


def probe_scores(model, g, eot, n=25, rows=8):
    """attnviz's induction probe in torch: <|endoftext|>, n random ids, the
    same n again; each head's previous and induction score (mean over rows)."""
    model.eval()
    ids = torch.randint(0, VOCAB, (rows, n), generator=g)
    x = torch.cat([torch.full((rows, 1), eot), ids, ids], 1)
    maps = []
    with torch.no_grad():
        model(x, maps)
    model.train()
    i = torch.arange(1, 2 * n + 1)
    prev = [m[:, :, i, i - 1].mean((0, 2)) for m in maps]
    q = torch.arange(n + 2, 2 * n + 1)  # second copies with an earlier copy before i - 1
    ind = [m[:, :, q, q - n + 1].mean((0, 2)) for m in maps]
    return torch.stack(prev), torch.stack(ind)


# ---- the folder ----------------------------------------------------------------------

def write_safetensors(path, tensors):
    """name -> float32 tensor; the format as make_gpt2_fixtures.py writes it."""
    order = sorted(tensors)
    header, off, blobs = {'__metadata__': {'format': 'pt'}}, 0, []
    for n in order:
        b = tensors[n].detach().contiguous().to(torch.float32).numpy().astype('<f4').tobytes()
        header[n] = {'dtype': 'F32', 'shape': list(tensors[n].shape),
                     'data_offsets': [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def hf_tensors(model):
    """Hugging Face's names; Conv1D weights stored [in, out]."""
    t = {'wte.weight': model.wte.weight, 'wpe.weight': model.wpe.weight,
         'ln_f.weight': model.ln_f.weight, 'ln_f.bias': model.ln_f.bias}
    for l, b in enumerate(model.h):
        h = f'h.{l}.'
        for hf, mod in (('ln_1', b.ln_1), ('ln_2', b.ln_2)):
            t[h + hf + '.weight'], t[h + hf + '.bias'] = mod.weight, mod.bias
        for hf, lin in (('attn.c_attn', b.c_attn), ('attn.c_proj', b.attn_proj),
                        ('mlp.c_fc', b.c_fc), ('mlp.c_proj', b.mlp_proj)):
            t[h + hf + '.weight'], t[h + hf + '.bias'] = lin.weight.T, lin.bias
    return t


def write_folder(out, model, merges, eot):
    os.makedirs(out, exist_ok=True)
    config = {
        'activation_function': 'gelu_new', 'architectures': ['GPT2LMHeadModel'],
        'attn_pdrop': 0.0, 'bos_token_id': eot, 'embd_pdrop': 0.0, 'eos_token_id': eot,
        'initializer_range': 0.02, 'layer_norm_epsilon': 1e-05, 'model_type': 'gpt2',
        'n_embd': N_EMBD, 'n_head': N_HEAD, 'n_inner': None, 'n_layer': N_LAYER,
        'n_positions': N_CTX, 'reorder_and_upcast_attn': False, 'resid_pdrop': 0.0,
        'scale_attn_by_inverse_layer_idx': False, 'scale_attn_weights': True,
        'tie_word_embeddings': True, 'torch_dtype': 'float32', 'vocab_size': VOCAB,
    }
    with open(os.path.join(out, 'config.json'), 'w') as f:
        json.dump(config, f, indent=2)
        f.write('\n')
    u = bytes_to_unicode()
    names = [''.join(u[c] for c in b) for b in token_bytes(merges)]
    vocab = {s: i for i, s in enumerate(names)}
    vocab['<|endoftext|>'] = eot
    with open(os.path.join(out, 'vocab.json'), 'w', encoding='utf-8') as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(out, 'merges.txt'), 'w', encoding='utf-8') as f:
        f.write('#version: 0.2\n')
        for a, b in merges:
            f.write(f'{names[a]} {names[b]}\n')
    write_safetensors(os.path.join(out, 'model.safetensors'), hf_tensors(model))


# ---- the run -------------------------------------------------------------------------

def held_out_losses(model, held, train, eot):
    """The model's and the bigram's mean loss on the same held-out targets:
    windows of N_CTX tokens, every target but each window's first."""
    model.eval()
    total, n, starts = 0.0, 0, range(0, len(held) - N_CTX - 1, N_CTX)
    with torch.no_grad():
        for s in starts:
            x = torch.tensor(held[s:s + N_CTX])[None]
            logits = model(x)[0, :-1]
            y = torch.tensor(held[s + 1:s + N_CTX])
            total += F.cross_entropy(logits, y, reduction='sum').item()
            n += len(y)
    at = torch.tensor([s + i for s in starts for i in range(1, N_CTX)])
    k, bigram = bigram_loss(train, held, VOCAB, at)
    return total / n, bigram, k, n


def main():
    args = [a for a in sys.argv[1:] if a != '--quick']
    quick = '--quick' in sys.argv
    out = args[0] if args else os.path.join(ROOT, 'assets', 'models', 'shakespeare-tiny')
    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    text = open(os.path.join(HERE, 'input.txt'), encoding='ascii').read()
    cut = text.rindex('\n', 0, len(text) * 9 // 10) + 1
    t0 = time.time()
    merges = train_bpe(text[:cut], VOCAB - 257)
    eot = 256 + len(merges)
    assert eot == VOCAB - 1, eot
    encode = encoder(merges)
    train, held = encode(text[:cut]), encode(text[cut:])
    print(f'bpe: {len(merges)} merges, {len(train)} training and {len(held)} held-out '
          f'tokens ({time.time() - t0:.0f} s)', flush=True)
    model = GPT()
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1},
                             {'params': other, 'weight_decay': 0.0}], lr=LR, betas=(0.9, 0.95))
    steps = 40 if quick else STEPS
    g = torch.Generator().manual_seed(SEED)
    t0 = time.time()
    for step in range(steps):
        lr = LR * min(1.0, (step + 1) / WARMUP) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for group in opt.param_groups:
            group['lr'] = lr
        x, y = batch(train, g, eot, P_RANDOM_REPEAT if step < steps // 2 else P_RANDOM_LATER)
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            prev, ind = probe_scores(model, torch.Generator().manual_seed(step), eot)
            print(f'step {step:5d}  loss {loss.item():.3f}  lr {lr:.5f}  best previous '
                  f'{prev.max():.2f}, induction {ind.max():.2f}  {time.time() - t0:.0f} s', flush=True)
    lm, bigram, k, n = held_out_losses(model, held, train, eot)
    print(f'held-out loss, {n} tokens: model {lm:.3f} nats/token, bigram (add-{k} '
          f'smoothed, of the training tokens) {bigram:.3f} nats/token', flush=True)
    write_folder(out, model, merges, eot)
    print(f'wrote {out}', flush=True)


if __name__ == '__main__':
    main()
