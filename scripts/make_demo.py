"""Write the demo corpus and run shipped in ``src/dialeval/data/demo``.

The dialogues are original text written for this project; the annotations and the run are MADE UP for
the demo (drawn with a fixed seed), not real judgements. Re-run: ``python scripts/make_demo.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "src" / "dialeval" / "data" / "demo"

DIALOGUES = [
    [("customer", ["My router has been blinking red since this morning and nothing loads."]),
     ("helpdesk", ["Sorry about that! Could you send us your account number by private message?"]),
     ("customer", ["Sent. It is still red."]),
     ("helpdesk", ["Thanks. We found an outage in your area; it should be fixed by 6 pm today."]),
     ("customer", ["It works again, thank you!"])],
    [("customer", ["Why was I charged twice for last month's bill?"]),
     ("helpdesk", ["We are checking it for you, please wait a moment."])],
    [("customer", ["The app logs me out every five minutes.", "Very annoying."]),
     ("helpdesk", ["Please update to the latest version and clear the cache."]),
     ("customer", ["Updated, same problem."])],
    [("customer", ["How do I change the delivery address of an order I already placed?"]),
     ("helpdesk", ["Open the order, tap 'Edit address' and confirm; it works until the parcel ships."]),
     ("customer", ["Found it, done. Thanks."])],
    [("customer", ["Your store in the city centre closed an hour early yesterday. I came for nothing."]),
     ("helpdesk", ["We apologise. Opening hours changed this week; we should have announced it better."])],
    [("customer", ["Is the new phone plan available for existing customers?"]),
     ("helpdesk", ["Yes, you can switch in the app under 'My plan'."]),
     ("customer", ["I don't see that option."]),
     ("helpdesk", ["Please send us a screenshot and we will look into it."])],
    [("customer", ["My package says delivered but it's not here."]),
     ("helpdesk", ["Could you check with your neighbours or the building's front desk?"]),
     ("customer", ["It was at the front desk. Sorry for the trouble!"]),
     ("helpdesk", ["No trouble at all, enjoy your purchase."])],
    [("customer", ["Internet is so slow tonight, I can't even stream music."]),
     ("helpdesk", ["We are not aware of any problem. Did you restart the modem?"]),
     ("customer", ["Yes, twice."]),
     ("helpdesk", ["Then we will send a technician; please tell us a time that suits you."]),
     ("customer", ["Tomorrow morning."]),
     ("helpdesk", ["Booked for 9-11 am tomorrow."])],
]

CUST = ["CNUG0", "CNUG", "CNUG*", "CNaN"]
HELP = ["HNUG", "HNUG*", "HNaN"]
LEVELS = [2, 1, 0, -1, -2]


def main() -> None:
    rng = np.random.default_rng(2026)
    gold, run = [], []
    for i, turns in enumerate(DIALOGUES):
        did = f"demo-{i + 1:03d}"
        centre = rng.integers(0, 5)
        anns = []
        for _ in range(7):
            q = {k: LEVELS[int(np.clip(centre + rng.integers(-1, 2), 0, 4))] for k in "ASE"}
            nug = [str(rng.choice(CUST if s == "customer" else HELP, p=[.5, .2, .1, .2] if s == "customer"
                                  else [.6, .2, .2])) for s, _ in turns]
            anns.append({"quality": q, "nugget": nug})
        gold.append({"id": did, "turns": [{"sender": s, "utterances": u} for s, u in turns],
                     "annotations": anns})
        qd = {}
        for k in "ASE":
            p = rng.dirichlet(np.ones(5))
            qd[k] = {str(lv): round(float(x), 4) for lv, x in zip(LEVELS, p, strict=True)}
        nd = []
        for s, _ in turns:
            types = CUST if s == "customer" else HELP
            p = rng.dirichlet(np.ones(len(types)))
            nd.append({t: round(float(x), 4) for t, x in zip(types, p, strict=True)})
        run.append({"id": did, "quality": qd, "nugget": nd})
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "gold.json").write_text(json.dumps(gold, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    (OUT / "run.json").write_text(json.dumps(run, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
