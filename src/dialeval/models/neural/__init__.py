"""The default model: a hierarchical network over sentence embeddings (the encoder frozen but for its top network,
which each member fine-tunes, ``finetune``), an ensemble of a few seeds.

Two networks, chosen by what the tasks of the model's scales let it read (:attr:`dialeval.tasks.Task.context`).
A task judged on the whole dialogue (STC-3's DQ and ND, a rating of the whole dialogue such as DSTC9's) gets
the bidirectional network below; a task judged on the turns so far (DBDC's breakdown, WOCHAT, ConTurE) gets a
causal one (a forward GRU, one head per scale, see :func:`.torch_net.build_turn_net`). A corpus with both
(ConTurE's turn impressions and its dialogues' DSTC9 ratings) gets both, the dialogue-level scales in the
bidirectional one.

Architecture of the whole-dialogue network (one member; the ensemble averages the members' probabilities):

1. each turn: its USE v3 embedding (512-d, :mod:`dialeval.models.encoders`), with ``utterances = "mean"``
   (the default) the L2-normalised mean of its utterances' embeddings (another 512-d; the same vector
   for a one-utterance turn), and the standardised
   :data:`~dialeval.models.features.POSITION_FEATURES` (sender, position flags, length, ...) →
   ``Linear → GELU → dropout`` to ``hidden`` units;
2. a bidirectional GRU over the turns of the dialogue (the context encoder) → ``2 × hidden`` per turn;
3. a head per turn-level scale (nuggets: ``Linear(2h → 4)`` for customer turns and ``Linear(2h → 3)`` for
   helpdesk turns), on the turn's GRU state concatenated with its input projection;
4. the pooled heads of the dialogue-level scales (quality): the mean, max and last turn of the GRU states →
   ``Linear → GELU`` → ``Linear(→ L)`` for each scale (A, S, E: L = 5). Scales with fewer levels than the
   largest (DSTC9: 2, 3 and 5) get probability 0 past their own levels (:func:`.numpy_net.bins_mask`); a dialogue
   unrated on a scale is left out of that scale's loss;
5. with ``annotators = "panel"``, the head of a scale labelled by a fixed panel of J annotators (STC-3: 19,
   listed in one order on every dialogue, each with their own way of rating; quality and nuggets alike) has
   ``J × L`` outputs: a distribution per annotator, each trained on that annotator's own labels; the scale's
   prediction is their mean, and the losses below apply to that mean.

Training (PyTorch, CPU): AdamW on soft labels — the annotators' distributions are the targets; each component
of a turn's vector is dropped with probability ``input_dropout`` (whole-dialogue network only) before step 1's
projection, which keeps the network from leaning on a few of its 1,164 inputs. Nugget
loss: cross-entropy ``-sum_i q(i) log p(i)``; quality loss: cross-entropy plus ``ordinal_weight ×
sum_i (cp(i) - cq(i))^2`` (the squared distance of the cumulative distributions, which respects the
order of the levels the way NMD does). With ``finetune`` > 0, each member also trains its own copy of the sentence
encoder's top network on the turns' top inputs (:func:`encoders.top`), which gives it the turn embedding of step 1
(:func:`.numpy_net.with_top`); the causal network the same. Prediction runs the same network in numpy (no torch import:
loading is fast); a test checks that both agree.

The package: :mod:`.model` (the estimator, :class:`Neural`), :mod:`.inputs` (the turn vectors and the arrays the
networks read), :mod:`.torch_net` and :mod:`.training` (fitting), :mod:`.numpy_net` (prediction);
``python -m dialeval.models.neural`` trains one member in a worker process (:mod:`.training`).
"""

from dialeval.models.neural.inputs import LEXICAL, SIMILARITY_FEATURES, context_similarities, utterance_means
from dialeval.models.neural.model import ANNOTATORS, UTTERANCES, Neural
from dialeval.models.neural.numpy_net import forward_numpy, forward_turns_numpy
from dialeval.models.neural.training import train_member, train_turn_member

__all__ = ["ANNOTATORS", "LEXICAL", "SIMILARITY_FEATURES", "UTTERANCES", "Neural", "context_similarities",
           "forward_numpy", "forward_turns_numpy", "train_member", "train_turn_member", "utterance_means"]
