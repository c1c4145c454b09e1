"""Write the example projects' data files: simulated machine translation outputs.

Each system copies a reference translation and then makes its share of typical MT errors
(a dropped word, a word left in English, a repeated word, words out of order, a wrong
article, lost punctuation), better systems fewer. For mt_tuples it also writes the study's
tuples (tuples.jsonl, as the platform stores a project's tuples) and the answers of three
simulated annotators in the guides' record (the tuple named by id only), so the file-mode
commands have something to score; for crowd_demo the items and the gold tuples of its
training and attention checks. The output is the same on every run:

    .venv/bin/python examples/make_data.py

With --demo-media it also writes the agreement demo's audio and point clouds
(examples/demo_media.py; they are not in the repository, load_demo writes them too):

    .venv/bin/python examples/make_data.py --demo-media
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from bws.core.design import balanced_design

HERE = Path(__file__).resolve().parent

# (English source, French reference, German reference)
SENTENCES = [
    (
        "The cat sat on the mat.",
        "Le chat s'est assis sur le tapis.",
        "Die Katze saß auf der Matte.",
    ),
    (
        "The train to Lyon leaves at eight o'clock.",
        "Le train pour Lyon part à huit heures.",
        "Der Zug nach Lyon fährt um acht Uhr ab.",
    ),
    (
        "We need more time to finish the report.",
        "Nous avons besoin de plus de temps pour terminer le rapport.",
        "Wir brauchen mehr Zeit, um den Bericht fertigzustellen.",
    ),
    (
        "The museum is closed on Mondays.",
        "Le musée est fermé le lundi.",
        "Das Museum ist montags geschlossen.",
    ),
    (
        "She bought fresh bread at the bakery this morning.",
        "Elle a acheté du pain frais à la boulangerie ce matin.",
        "Sie hat heute Morgen frisches Brot in der Bäckerei gekauft.",
    ),
    (
        "Please close the window before you leave.",
        "Veuillez fermer la fenêtre avant de partir.",
        "Bitte schließen Sie das Fenster, bevor Sie gehen.",
    ),
    (
        "The meeting has been moved to Thursday afternoon.",
        "La réunion a été déplacée à jeudi après-midi.",
        "Die Besprechung wurde auf Donnerstagnachmittag verschoben.",
    ),
    (
        "My brother works as a nurse in a large hospital.",
        "Mon frère travaille comme infirmier dans un grand hôpital.",
        "Mein Bruder arbeitet als Krankenpfleger in einem großen Krankenhaus.",
    ),
    (
        "It rained all week in the mountains.",
        "Il a plu toute la semaine dans les montagnes.",
        "Es hat die ganze Woche in den Bergen geregnet.",
    ),
    (
        "The children are playing in the garden.",
        "Les enfants jouent dans le jardin.",
        "Die Kinder spielen im Garten.",
    ),
    (
        "Can you tell me where the station is?",
        "Pouvez-vous me dire où se trouve la gare ?",
        "Können Sie mir sagen, wo der Bahnhof ist?",
    ),
    (
        "The new law will come into force next year.",
        "La nouvelle loi entrera en vigueur l'année prochaine.",
        "Das neue Gesetz tritt nächstes Jahr in Kraft.",
    ),
    (
        "He forgot his umbrella on the bus.",
        "Il a oublié son parapluie dans le bus.",
        "Er hat seinen Regenschirm im Bus vergessen.",
    ),
    (
        "The results of the study were published in March.",
        "Les résultats de l'étude ont été publiés en mars.",
        "Die Ergebnisse der Studie wurden im März veröffentlicht.",
    ),
    (
        "I would like a table for two, please.",
        "Je voudrais une table pour deux, s'il vous plaît.",
        "Ich hätte gern einen Tisch für zwei Personen, bitte.",
    ),
    (
        "The company plans to open three new stores.",
        "L'entreprise prévoit d'ouvrir trois nouveaux magasins.",
        "Das Unternehmen plant, drei neue Geschäfte zu eröffnen.",
    ),
    (
        "Our flight was delayed because of the fog.",
        "Notre vol a été retardé à cause du brouillard.",
        "Unser Flug hatte wegen des Nebels Verspätung.",
    ),
    (
        "The library lends books for three weeks.",
        "La bibliothèque prête des livres pour trois semaines.",
        "Die Bibliothek verleiht Bücher für drei Wochen.",
    ),
    (
        "She speaks four languages fluently.",
        "Elle parle couramment quatre langues.",
        "Sie spricht fließend vier Sprachen.",
    ),
    (
        "The price of vegetables has risen sharply.",
        "Le prix des légumes a fortement augmenté.",
        "Der Preis für Gemüse ist stark gestiegen.",
    ),
    (
        "The bridge will be repaired during the summer.",
        "Le pont sera réparé pendant l'été.",
        "Die Brücke wird im Sommer repariert.",
    ),
    (
        "Do not forget to water the plants.",
        "N'oublie pas d'arroser les plantes.",
        "Vergiss nicht, die Pflanzen zu gießen.",
    ),
    (
        "The doctor advised him to rest for a few days.",
        "Le médecin lui a conseillé de se reposer quelques jours.",
        "Der Arzt riet ihm, sich ein paar Tage auszuruhen.",
    ),
    (
        "The team won the match in the last minute.",
        "L'équipe a gagné le match à la dernière minute.",
        "Die Mannschaft gewann das Spiel in der letzten Minute.",
    ),
    (
        "This road leads to the old harbour.",
        "Cette route mène au vieux port.",
        "Diese Straße führt zum alten Hafen.",
    ),
    (
        "The students must submit their essays by Friday.",
        "Les étudiants doivent rendre leurs dissertations avant vendredi.",
        "Die Studierenden müssen ihre Aufsätze bis Freitag einreichen.",
    ),
    (
        "The concert was cancelled at the last moment.",
        "Le concert a été annulé au dernier moment.",
        "Das Konzert wurde im letzten Moment abgesagt.",
    ),
    (
        "My grandmother grows tomatoes on her balcony.",
        "Ma grand-mère cultive des tomates sur son balcon.",
        "Meine Großmutter baut auf ihrem Balkon Tomaten an.",
    ),
    (
        "The hotel offers free breakfast to all guests.",
        "L'hôtel offre le petit-déjeuner gratuit à tous les clients.",
        "Das Hotel bietet allen Gästen ein kostenloses Frühstück.",
    ),
    (
        "Prices are expected to fall in the autumn.",
        "On s'attend à une baisse des prix à l'automne.",
        "Es wird erwartet, dass die Preise im Herbst sinken.",
    ),
]

# Expected number of errors per output: sys_a is the strongest system.
ERROR_RATES = {
    "sys_a": 0.15,
    "sys_b": 0.5,
    "sys_c": 0.9,
    "sys_d": 1.3,
    "sys_e": 1.8,
    "sys_f": 2.4,
}

ARTICLES = {
    "fr": {"le": "la", "la": "le", "un": "une", "une": "un", "les": "le", "des": "les"},
    "de": {
        "der": "die",
        "die": "das",
        "das": "der",
        "den": "dem",
        "dem": "den",
        "ein": "eine",
        "eine": "ein",
        "einen": "ein",
    },
}
END_PUNCTUATION = ".?!"


def _split_end(words: list[str]) -> tuple[list[str], str]:
    """Detach the final punctuation so word-level edits leave it in place."""
    last = words[-1]
    if last in ("?", "!"):
        return words[:-1], " " + last
    if last and last[-1] in END_PUNCTUATION:
        return words[:-1] + [last[:-1]], last[-1]
    return words, ""


def _degrade(text: str, source: str, language: str, rng: random.Random) -> str:
    words, end = _split_end(text.split())
    error = rng.choice(["drop", "untranslated", "repeat", "swap", "article", "punctuation"])
    if error == "drop" and len(words) > 3:
        del words[rng.randrange(1, len(words))]
    elif error == "untranslated":
        english = [w.strip(".,?!").lower() for w in source.split() if len(w.strip(".,?!")) > 2]
        words[rng.randrange(1, len(words))] = rng.choice(english)
    elif error == "repeat":
        index = rng.randrange(len(words))
        words.insert(index, words[index].lower())
    elif error == "article":
        positions = [i for i, w in enumerate(words) if w.lower() in ARTICLES[language]]
        if positions:
            index = rng.choice(positions)
            replacement = ARTICLES[language][words[index].lower()]
            words[index] = replacement.capitalize() if words[index][0].isupper() else replacement
        else:
            error = "swap"
    if error == "swap" and len(words) > 2:
        index = rng.randrange(len(words) - 1)
        words[index], words[index + 1] = words[index + 1], words[index]
    if error == "punctuation":
        end = ""
        words[0] = words[0][0].lower() + words[0][1:]
    return " ".join(words) + end


def translate(sentence: int, language: str, system: str, rng: random.Random) -> str:
    rate = ERROR_RATES[system]
    errors = int(rate) + (1 if rng.random() < rate - int(rate) else 0)
    return with_errors(sentence, language, errors, rng)


def with_errors(sentence: int, language: str, errors: int, rng: random.Random) -> str:
    """The reference translation of the sentence with that many errors made in it."""
    source, french, german = SENTENCES[sentence]
    text = french if language == "fr" else german
    for _ in range(errors):
        text = _degrade(text, source, language, rng)
    return text


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def mt_systems(seed: int, *, with_source: bool) -> list[dict]:
    """200 items, one per line: 20 French and 20 German sentences from 5 systems (with
    their source, each output also names its sentence_id, e.g. fr_011)."""
    rng = random.Random(seed)
    pairs = [(s, "fr") for s in range(20)] + [(s, "de") for s in range(10, 30)]
    systems = ["sys_a", "sys_b", "sys_c", "sys_d", "sys_e"]
    records = []
    for sentence, language in pairs:
        for system in systems:
            record = {
                "id": f"mt_{len(records) + 1:04d}",
                "text": translate(sentence, language, system, rng),
                "system": system,
            }
            if with_source:
                record["source"] = SENTENCES[sentence][0]
                record["language"] = language
                # One source sentence into one language: the outputs a tuple compares.
                record["sentence_id"] = f"{language}_{sentence + 1:03d}"
            records.append(record)
    return records


# The crowd demo's systems make a fixed number of errors, so that its gold tuples (the
# output with none, two with one, the one with four) have an answer nobody can dispute.
CROWD_ERRORS = {"sys_a": 0, "sys_b": 1, "sys_c": 1, "sys_d": 2, "sys_e": 4}
CROWD_SENTENCES = 10
CROWD_GOLD = 6  # the first two are the training, the others attention checks


def crowd_study(seed: int) -> tuple[list[dict], list[dict]]:
    """The crowd demo's items (10 English sentences, each into French by five systems) and
    its gold tuples, one per sentence of the first six: best the output without errors,
    worst the one with four."""
    rng = random.Random(seed)
    items, gold = [], []
    for sentence in range(CROWD_SENTENCES):
        ids = {}
        for system, errors in CROWD_ERRORS.items():
            ids[system] = f"cr_{len(items) + 1:04d}"
            items.append(
                {
                    "id": ids[system],
                    "text": with_errors(sentence, "fr", errors, rng),
                    "system": system,
                    "source": SENTENCES[sentence][0],
                    "sentence_id": f"fr_{sentence + 1:03d}",
                }
            )
        if sentence < CROWD_GOLD:
            shown = [ids[s] for s in ("sys_a", "sys_b", "sys_c", "sys_e")]
            rng.shuffle(shown)
            gold.append(
                {
                    "id": f"gold_{sentence + 1:02d}",
                    "items": shown,
                    "best": ids["sys_a"],
                    "worst": ids["sys_e"],
                }
            )
    return items, gold


def mt_tuples(seed: int) -> list[dict]:
    """30 source sentences, each with the French output of the same six systems."""
    rng = random.Random(seed)
    instances = []
    for sentence, (source, _, _) in enumerate(SENTENCES):
        translations = [
            {"id": system, "text": translate(sentence, "fr", system, rng)} for system in ERROR_RATES
        ]
        instances.append(
            {"id": f"sent_{sentence + 1:03d}", "source": source, "translations": translations}
        )
    return instances


def instance_tuples(instances: list[dict], *, tuple_size=4, appearances=5, seed=42) -> list[dict]:
    """Each instance's balanced tuples, numbered and seeded as the platform builds them
    (mt_tuples/config.yaml: tuples of 4, 5 appearances, seed 42, one design per instance)."""
    tuples = []
    for position, instance in enumerate(instances):
        ids = [translation["id"] for translation in instance["translations"]]
        local_seed = int(np.random.SeedSequence([seed, position]).generate_state(1)[0])
        design = balanced_design(len(ids), tuple_size, appearances, seed=local_seed)
        for row in design.tuples:
            tuples.append(
                {
                    "id": f"tuple_{len(tuples) + 1:06d}",
                    "items": [ids[k] for k in row],
                    "instance": instance["id"],
                }
            )
    return tuples


def simulated_answers(tuples: list[dict], scheme: str, seed: int) -> list[dict]:
    """Three annotators answer every tuple: best is the system that looks best to them
    (its error rate plus their noise), worst the one that looks worst."""
    rng = random.Random(seed)
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    answers = []
    for annotator in ("sim_1", "sim_2", "sim_3"):
        for tuple_ in tuples:
            seen = sorted(tuple_["items"], key=lambda s: ERROR_RATES[s] + rng.gauss(0, 0.5))
            moment = start + timedelta(seconds=20 * len(answers))
            answers.append(
                {
                    "id": tuple_["id"],
                    "annotations": {scheme: {"best": seen[0], "worst": seen[-1]}},
                    "annotator": annotator,
                    "timestamp": moment.isoformat().replace("+00:00", "Z"),
                }
            )
    return answers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the example projects' data files.")
    parser.add_argument(
        "--demo-media",
        action="store_true",
        help="also write the agreement demo's audio and point clouds (agreement_demo/media)",
    )
    args = parser.parse_args(argv)
    write_jsonl(HERE / "mt_bws/data/mt_systems.jsonl", mt_systems(1, with_source=True))
    write_jsonl(HERE / "mt_two_dims/data/mt_outputs.jsonl", mt_systems(2, with_source=True))
    items, gold = crowd_study(5)
    write_jsonl(HERE / "crowd_demo/data/outputs.jsonl", items)
    write_jsonl(HERE / "crowd_demo/gold.jsonl", gold)
    instances = mt_tuples(3)
    write_jsonl(HERE / "mt_tuples/data/mt_tuples.jsonl", instances)
    tuples = instance_tuples(instances)
    write_jsonl(HERE / "mt_tuples/tuples.jsonl", tuples)
    answers = simulated_answers(tuples, "overall_quality", seed=4)
    write_jsonl(HERE / "mt_tuples/output/annotations.jsonl", answers)
    if args.demo_media:
        sys.path.insert(0, str(HERE))
        import demo_media

        demo_media.main([])


if __name__ == "__main__":
    main()
