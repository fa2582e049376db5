"""The fixed facts of the Gomocup "pbrain" protocol that both of its sides share: the manager
side (``gomoku.players.external``, a pbrain engine as a player) and the engine side
(``gomoku.pbrain``, this project's engine, which parses the manager's lines).

They live here, with the players, because that is the lower of the two layers: the engine
(``gomoku.pbrain``, above the players and the matches) may import them, and the players must not
import anything of the engine's. The protocol's parsing stays in ``gomoku.pbrain.protocol``,
which only the engine speaks.
"""

N_IN_ROW = 5  # the protocol's games are five in a row (freestyle)
MAX_LINE_BYTES = 4096  # a longer line (in characters for a text line) is not a command: ERROR
