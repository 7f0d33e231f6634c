"""The error-span judgments benchmarks/error_spans.py generates (its docstring says how): systems of known
quality, domains, raters (a few at random), 0-6 spans a judgment, texts of common words."""
from __future__ import annotations

DOMAINS = ("news", "speech", "social")
DOMAIN_SHARE = (0.45, 0.35, 0.20)
DOMAIN_OFFSET = (0.0, -4.0, -8.0)
SLOTS = 6  # at most SLOTS spans a judgment, one per sixth of the text
HIT_SIZE = 100
#: Category shares of the generated MQM errors (DEFAULT_MQM_TAXONOMY order); Non-translation weighs 25.
CATEGORY_SHARE = {"Accuracy/Mistranslation": 30, "Accuracy/Omission": 8, "Accuracy/Addition": 4,
                  "Accuracy/Untranslated": 3, "Fluency/Grammar": 14, "Fluency/Spelling": 6, "Fluency/Punctuation": 10,
                  "Fluency/Register": 3, "Fluency/Inconsistency": 3, "Terminology": 8, "Style": 7,
                  "Locale convention": 2, "Other": 1.8, "Non-translation": 0.2}
WORDS = ("the of and to in is that for it as was with be by on not he this are or his from at which but have an they "
         "you were her she there been one all we their has would when if so no will more what up can out about who "
         "into them some could time these two may then do first any like now my other over new only also see years "
         "after very most made way where just many such through long before must much should well people").split()


# ---------------------------------------------------------------------------------------------
# The generated judgments
# ---------------------------------------------------------------------------------------------

def system_names(n: int) -> list[str]:
    return [f"sys-{chr(65 + k)}" if n <= 26 else f"sys-{k:02d}" for k in range(n)]


def generate(args):
    """Every judgment and span as numpy arrays (see the module's docstring). System k's quality rank is
    `rank_of[k]` (0 = best)."""
    import numpy as np

    rng = np.random.default_rng(args.seed)
    S, N, R = args.systems, args.segments, args.raters
    n_first = S * N
    n_double, n_bad = args.double, args.judgments - S * N - args.double
    if n_bad < 0 or n_double > n_first or n_bad > n_first:
        raise SystemExit(f"--judgments {args.judgments} must lie between --systems x --segments + --double "
                         f"({n_first + n_double:,}) and that + {n_first:,}")
    rank_of = rng.permutation(S)  # quality rank of each system (by name)
    quality = np.linspace(78.0, 50.0, S)[rank_of]
    p_span = np.linspace(0.35, 0.65, S)[rank_of]  # binomial(6, p): mean spans 2.1 .. 3.9
    p_major = np.linspace(0.15, 0.45, S)[rank_of]

    # documents of 5-15 segments, each in one domain
    sizes = []
    while sum(sizes) < N:
        sizes.append(int(rng.integers(5, 16)))
    sizes[-1] -= sum(sizes) - N
    if sizes[-1] <= 0:
        sizes.pop()
        sizes[-1] += N - sum(sizes)
    doc_size = np.array(sizes)
    doc_domain = rng.choice(len(DOMAINS), size=doc_size.size, p=DOMAIN_SHARE)
    seg_doc = np.repeat(np.arange(doc_size.size), doc_size)
    seg_number = np.arange(N) - np.repeat(np.cumsum(doc_size) - doc_size, doc_size) + 1  # 1-based within doc
    seg_difficulty = rng.normal(0.0, 8.0, N)
    out_length = rng.integers(70, 91, n_first)  # output o = segment * S + system
    src_length = rng.integers(70, 91, N)

    rater_bias = rng.normal(0.0, 5.0, R)
    rater_noise = rng.uniform(6.0, 14.0, R)
    random_rater = np.zeros(R, bool)
    random_rater[rng.choice(R, args.random_raters, replace=False)] = True

    # judgments: first ratings, second ratings of n_double outputs, perturbed copies of n_bad first ratings
    first_rater = rng.integers(0, R, n_first)
    doubled = np.sort(rng.choice(n_first, n_double, replace=False))
    second_rater = (first_rater[doubled] + 1 + rng.integers(0, R - 1, n_double)) % R
    perturbed = np.sort(rng.choice(n_first, n_bad, replace=False))
    output = np.concatenate([np.arange(n_first), doubled, perturbed])
    rater = np.concatenate([first_rater, second_rater, first_rater[perturbed]])
    kind = np.concatenate([np.zeros(n_first + n_double, np.int64), np.ones(n_bad, np.int64)])  # 1 = bad_ref
    J = output.size
    system, segment = output % S, output // S
    is_random = random_rater[rater]

    # spans: how many, adjusted to exactly --spans in all (perturbed copies and their originals left as drawn)
    bad = kind == 1
    k = rng.binomial(SLOTS, np.where(is_random, 0.5, p_span[system]))
    copied = bad & ~is_random  # a diligent rater's perturbed copy: the original's errors and one major more
    k[copied] = np.minimum(k[output[copied]] + 1, SLOTS)  # row o is output o's first rating
    k[bad & is_random] = np.maximum(k[bad & is_random], 1)
    fixed = bad.copy()
    fixed[output[bad]] = True
    diff = args.spans - int(k.sum())
    while diff:
        room = np.flatnonzero(~fixed & ((k < SLOTS) if diff > 0 else (k > 0)))
        if room.size == 0:
            raise SystemExit(f"--spans {args.spans:,} cannot be reached with at most {SLOTS} a judgment")
        k[rng.choice(room, min(abs(diff), room.size), replace=False)] += 1 if diff > 0 else -1
        diff = args.spans - int(k.sum())
    # each span in its own sixth of the target: non-overlapping, inside the text
    slots = np.where(np.arange(SLOTS)[None, :] < k[:, None], np.argsort(rng.random((J, SLOTS)), axis=1), SLOTS)
    slots.sort(axis=1)
    span_slot = slots[slots < SLOTS]  # judgment by judgment, in text order
    span_judgment = np.repeat(np.arange(J), k)
    width = out_length[output[span_judgment]] // SLOTS
    low = span_slot * width
    start = low + np.floor(rng.random(span_slot.size) * (width - 1)).astype(np.int64)
    room = low + width - start
    end = start + 1 + np.floor(rng.random(span_slot.size) * np.minimum(8, room)).astype(np.int64)
    major = rng.random(span_slot.size) < np.where(is_random[span_judgment], 0.5, p_major[system[span_judgment]])
    first_span = np.cumsum(k) - k
    major[first_span[bad & is_random]] = True
    share = np.array(list(CATEGORY_SHARE.values()), dtype=np.float64)
    category = rng.choice(share.size, size=span_slot.size, p=share / share.sum())
    omission = list(CATEGORY_SHARE).index("Accuracy/Omission")
    for j in np.flatnonzero(copied).tolist():  # the original's spans, plus a major omission in a free slot
        o = int(output[j])
        a, n = int(first_span[o]), int(k[o])
        spans = list(zip(span_slot[a:a + n].tolist(), start[a:a + n].tolist(), end[a:a + n].tolist(),
                         major[a:a + n].tolist(), category[a:a + n].tolist(), strict=True))
        if n < SLOTS:
            free = sorted(set(range(SLOTS)) - {x[0] for x in spans})
            slot = free[int(rng.integers(0, len(free)))]
            w = int(out_length[o]) // SLOTS
            spans = sorted([*spans, (slot, slot * w, slot * w + min(w, 4), True, omission)])
        else:
            minor = [i for i, x in enumerate(spans) if not x[3]]
            if minor:
                spans[minor[0]] = (*spans[minor[0]][:3], True, spans[minor[0]][4])
        b = int(first_span[j])
        for i, (slot, x0, x1, m, c) in enumerate(spans):
            span_slot[b + i], start[b + i], end[b + i], major[b + i], category[b + i] = slot, x0, x1, m, c
    same = span_judgment[1:] == span_judgment[:-1]
    assert (start < end).all() and (end <= out_length[output[span_judgment]]).all(), "a span out of bounds"
    assert (start[1:][same] >= end[:-1][same]).all(), "overlapping spans"
    n_major = np.bincount(span_judgment, weights=major, minlength=J)
    n_minor = k - n_major

    # scores
    domain = doc_domain[seg_doc[segment]]
    latent = (quality[system] + np.array(DOMAIN_OFFSET)[domain] + seg_difficulty[segment] + rater_bias[rater]
              + rng.normal(0.0, 1.0, J) * rater_noise[rater] - n_minor - 4.0 * n_major)
    latent[bad] = latent[output[bad]] - rng.uniform(15.0, 40.0, n_bad)  # row o is output o's first rating
    score = np.clip(np.rint(latent), 0, 100)
    score[is_random] = rng.integers(0, 101, int(is_random.sum()))
    seconds = np.round(rng.lognormal(np.log(30.0), 0.5, J), 1)

    # HITs: each rater's system judgments in document order, HIT_SIZE at a time; a perturbed copy goes at the
    # end of its original's HIT, the two paired by partner_position
    order = np.lexsort((segment, rater, kind))  # kind 0 first
    n_sys = n_first + n_double
    sys_order = order[:n_sys]
    r_sorted = rater[sys_order]
    starts_r = np.searchsorted(r_sorted, np.arange(R))
    pos_in_rater = np.arange(n_sys) - starts_r[r_sorted]
    hit_in_rater = pos_in_rater // HIT_SIZE
    hits_per_rater = np.bincount(r_sorted, minlength=R)
    hits_per_rater = (hits_per_rater + HIT_SIZE - 1) // HIT_SIZE
    first_hit = np.cumsum(hits_per_rater) - hits_per_rater
    hit = np.empty(J, np.int64)
    position = np.empty(J, np.int64)
    hit[sys_order] = first_hit[r_sorted] + hit_in_rater
    position[sys_order] = pos_in_rater % HIT_SIZE
    partner = np.full(J, -1, np.int64)
    bad_rows = np.flatnonzero(bad)
    original_rows = output[bad_rows]  # first ratings are rows 0 .. n_first-1, row = output
    hit[bad_rows] = hit[original_rows]
    by_hit = bad_rows[np.argsort(hit[bad_rows], kind="stable")]
    hit_sizes = np.bincount(hit[:n_sys], minlength=int(first_hit[-1] + hits_per_rater[-1]))
    rank_in_hit = np.arange(by_hit.size) - np.searchsorted(hit[by_hit], hit[by_hit])
    position[by_hit] = hit_sizes[hit[by_hit]] + rank_in_hit
    partner[bad_rows] = position[original_rows]
    partner[original_rows] = position[bad_rows]
    hit_sizes = np.bincount(hit, minlength=hit_sizes.size)
    hit_rater = np.repeat(np.arange(R), hits_per_rater)
    item_order = np.lexsort((position, hit))  # rows in (HIT, position) order: items and judgments stored so

    return {
        "names": system_names(S), "rank_of": rank_of, "quality": quality, "p_span": p_span, "p_major": p_major,
        "doc_size": doc_size, "doc_domain": doc_domain, "seg_doc": seg_doc, "seg_number": seg_number,
        "out_length": out_length, "src_length": src_length, "random_rater": random_rater,
        "output": output, "rater": rater, "kind": kind, "system": system, "segment": segment, "score": score,
        "seconds": seconds, "hit": hit, "position": position, "partner": partner, "hit_sizes": hit_sizes,
        "hit_rater": hit_rater, "item_order": item_order, "k": k, "span_judgment": span_judgment, "start": start,
        "end": end, "major": major, "category": category, "first_span": first_span,
    }


def texts(lengths, seed: int) -> list[str]:
    """Deterministic pseudo-sentences of the given lengths (code points)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    base = " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), 200_000))
    offsets = rng.integers(0, len(base) - 200, len(lengths))
    return [base[o:o + n].strip().ljust(n, ".")[:n].capitalize() for o, n in zip(offsets.tolist(), lengths.tolist(),
                                                                                  strict=True)]


def expected_order(g) -> list[str]:
    return [g["names"][k] for k in sorted(range(len(g["names"])), key=lambda k: int(g["rank_of"][k]))]
