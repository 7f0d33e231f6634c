"""Write the sample campaign files of annotation/demo/: one small file per protocol (docs/api.md §2).

Run `python annotation/demo/make_samples.py` to write them again; the text is generated from fixed word
lists, so the files come out the same every time. Every file has 4 documents of 5 segments (20 segments)
with a `domain` per document and a `gold` translation per line; the ranking and Direct Assessment files have
four systems, the pairwise files two, the others three; the constituent files mark a highlighted phrase
(`constituent`).
"""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOCUMENTS = [("harbour-news", "news"), ("city-council", "news"), ("museum-talk", "speech"), ("river-walk", "speech")]
SEGMENTS_PER_DOCUMENT = 5
#: (German adjective, English adjective, a synonym), (German noun phrase head, English noun), verb phrases.
ADJECTIVES = [("kleine", "small", "little"), ("alte", "old", "ancient"), ("neue", "new", "recent"),
              ("grosse", "big", "large"), ("ruhige", "quiet", "calm")]
NOUNS = [("Hafen", "harbour"), ("Markt", "market"), ("Park", "park"), ("Bahnhof", "station"), ("Turm", "tower")]
VERBS = [("wurde am Montag wieder eröffnet", "reopened on Monday", "was opened again on Monday"),
         ("zieht viele Besucher an", "attracts many visitors", "draws a lot of visitors"),
         ("braucht dringend eine Renovierung", "urgently needs a renovation", "needs repairs urgently"),
         ("liegt direkt am Fluss", "lies right by the river", "is located next to the river"),
         ("ist abends geschlossen", "is closed in the evening", "closes in the evenings")]
SYSTEMS = ["online-A", "neural-B", "rule-C", "phrase-D"]
#: Per protocol: its file's number of systems and whether its lines mark constituent phrases (samples.json, which
#: load_demo reads for the import options too).
SAMPLES = json.loads((HERE / "samples.json").read_text(encoding="utf-8"))["samples"]
PROTOCOLS = list(SAMPLES)


def _segment(doc: int, seg: int) -> dict:
    """One line's texts: the source, the reference, a gold translation and every system's output, each with
    its noun phrase (the constituent) marked by its text."""
    k = doc * SEGMENTS_PER_DOCUMENT + seg
    adj_de, adj, adj_alt = ADJECTIVES[k % 5]
    noun_de, noun = NOUNS[(k // 5 + k) % 5]
    verb_de, verb, verb_alt = VERBS[(k * 3 + doc) % 5]
    source_phrase = f"{adj_de} {noun_de}"
    source = f"Der {source_phrase} {verb_de}."
    outputs = {  # system: (text, the highlighted phrase in it)
        "online-A": (f"The {adj} {noun} {verb}.", f"{adj} {noun}"),
        "neural-B": (f"The {adj_alt} {noun} {verb_alt}.", f"{adj_alt} {noun}"),
        "rule-C": (f"{adj.capitalize()} {noun} {verb_alt.split(' ', 1)[1]}.", f"{adj.capitalize()} {noun}"),
        "phrase-D": (f"The {noun} {adj} {verb}.", f"{noun} {adj}"),
    }
    return {"source": (source, source_phrase), "reference": f"The {adj} {noun} {verb}.",
            "gold": f"The {adj} {noun} {verb}.", "outputs": outputs}


def _span(text: str, phrase: str) -> list[int]:
    start = text.index(phrase)
    return [start, start + len(phrase)]


def lines(protocol: str) -> list[dict]:
    systems = SYSTEMS[:SAMPLES[protocol]["systems"]]
    rows = []
    for doc, (doc_id, domain) in enumerate(DOCUMENTS):
        for seg in range(SEGMENTS_PER_DOCUMENT):
            texts = _segment(doc, seg)
            source, source_phrase = texts["source"]
            row = {"doc_id": doc_id, "seg_id": seg + 1, "domain": domain, "source": source,
                   "reference": texts["reference"], "gold": texts["gold"],
                   "systems": {name: texts["outputs"][name][0] for name in systems}}
            if SAMPLES[protocol]["constituent"]:
                row["constituent"] = {"source": _span(source, source_phrase), "systems": {
                    name: _span(*texts["outputs"][name]) for name in systems}}
            rows.append(row)
    return rows


def path_of(protocol: str) -> Path:
    return HERE / f"{protocol}.jsonl"


def main() -> None:
    for protocol in PROTOCOLS:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in lines(protocol))
        path_of(protocol).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
