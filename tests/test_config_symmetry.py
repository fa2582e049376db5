"""Config loading and validation; the 8-fold symmetry augmentation."""

from dataclasses import replace

import numpy as np
import pytest

from gomoku import Board
from gomoku.training.config import Config, ConfigError, load_config, save_config
from gomoku.training.samples import Samples
from gomoku.training.symmetry import augment, move_permutations


def test_shipped_configs_load():
    config = load_config("configs/9x9.yaml")
    assert (config.board.width, config.board.height, config.board.n_in_row) == (9, 9, 5)
    assert config.search.n_playout == 400 and config.search.c_puct == 5.0  # the classic search
    assert config.search.forced_moves and config.eval.opponents  # the exact rules; a real yardstick
    assert load_config("configs/smoke.yaml").board.width == 6


def test_the_two_nets_compared_at_equal_run_time_differ_in_the_net_alone():
    """configs/9x9.yaml and configs/9x9-resnet.yaml: the 3-conv net and the tower, one run each."""
    conv3, tower = load_config("configs/9x9.yaml"), load_config("configs/9x9-resnet.yaml")
    assert (conv3.net.arch, conv3.net.head, tower.net.arch, tower.net.head) == ("conv3", "pooled", "resnet", "pooled")
    assert conv3 == replace(tower, net=conv3.net)
    assert conv3.train.max_minutes == 90 and "ab:4:vct" in conv3.eval.opponents


@pytest.mark.parametrize("override, message", [
    ("search.n_playouts=3", "unknown key search.n_playouts"),
    ("bogus.key=1", "unknown key bogus"),
    ("search.n_playout=abc", "search.n_playout: expected an integer"),
    ("search.n_playout=1.5", "search.n_playout: expected an integer"),
    ("search.c_puct=-1", "search.c_puct: must be > 0"),
    ("train.buffer_size=10", "train.buffer_size: must be >= batch_size"),
    ("board.n_in_row=12", "board.n_in_row"),
    ("net.arch=mlp", "net.arch"),
    ("selfplay.inference=gpu", "selfplay.inference: must be auto, worker or server"),
    ("selfplay.device=tpu", "selfplay.device: must be auto, cpu or cuda"),
    ("search=3", "search: expected a mapping"),
    ("noequals", "section.key=value"),
])
def test_bad_values_are_named(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config("configs/9x9.yaml", [override])


def test_overrides_and_round_trip(tmp_path):
    config = load_config("configs/9x9.yaml", ["search.n_playout=200", "train.lr=1e-3", "seed=7"])
    assert config.search.n_playout == 200 and config.train.lr == 1e-3 and config.seed == 7
    save_config(config, tmp_path / "c.yaml")
    assert load_config(tmp_path / "c.yaml") == config
    assert load_config(None) == Config()


@pytest.mark.parametrize("width, height", [(9, 9), (6, 6), (7, 5)])
def test_symmetries_are_bijections(width, height):
    perms = move_permutations(width, height)
    assert len(perms) == (8 if width == height else 4)
    assert np.array_equal(perms[0], np.arange(width * height))
    assert len({p.tobytes() for p in perms}) == len(perms)
    for perm in perms:
        assert np.array_equal(np.sort(perm), np.arange(width * height))


def test_augmentation_keeps_planes_and_policy_consistent():
    rng = np.random.default_rng(0)
    for width, height in ((9, 9), (7, 5)):
        for _ in range(10):
            board = Board(width, height, 4)
            for _ in range(int(rng.integers(1, 12))):
                board.do_move(int(rng.choice(board.availables)))
            state = board.current_state()[None]
            policy = rng.random((1, width * height)) * (state[0, :2].sum(0).ravel() == 0)
            best = int(policy.argmax())
            images = augment(Samples(state, policy, np.array([0.5])))
            states, policies, outcomes = images.states, images.probs, images.outcomes
            for s, p in zip(states, policies):
                # The symmetric image of the best move is the best move of the symmetric position,
                # and it lands on an empty point of the transformed planes; the last-move plane
                # moves with the stones.
                image = int(p.argmax())
                assert p[image] == policy[0, best]
                assert s[0].ravel()[image] == 0 and s[1].ravel()[image] == 0
                assert s[0].sum() == state[0, 0].sum() and s[1].sum() == state[0, 1].sum()
                last = int(s[2].ravel().argmax())
                assert s[0].ravel()[last] + s[1].ravel()[last] == 1
            assert (outcomes == 0.5).all()
            # Every point's policy moves as its planes do: a policy on the stones of plane 0 lands
            # on plane 0's stones in each image (a policy turned the other way than the planes on
            # the 90 and 270 degree turns passed the checks above).
            on_stones = state[0, 0].ravel()[None].astype(np.float64)
            stone_images = augment(Samples(state, on_stones, np.array([0.5])))
            images, stone_policies = stone_images.states, stone_images.probs
            for s, p in zip(images, stone_policies, strict=True):
                np.testing.assert_array_equal(p, s[0].ravel())
            # The identity comes first and is unchanged.
            np.testing.assert_array_equal(states[0], state[0])


@pytest.mark.parametrize("override", ["train.lr=.inf", "train.lr=.nan", "train.lr=nan", "search.c_puct=-.inf",
                                      "train.kl_targ=1e999"])
def test_non_finite_numbers_are_rejected(override):
    with pytest.raises(ConfigError, match=f"{override.split('=')[0]}: expected a finite number"):
        load_config("configs/smoke.yaml", [override])


def test_resume_config_changes_only_what_a_run_may_change():
    from gomoku.training.config import RESUME_FIXED, resume_config

    stored = load_config("configs/smoke.yaml", ["search.n_playout=8"])
    same, changes = resume_config(stored, [])
    assert same == stored and changes == {}
    config, changes = resume_config(stored, ["train.lr=1e-3", "search.n_playout=8", "eval.games=4"])
    assert changes == {"train.lr": (0.002, 0.001), "eval.games": (2, 4)}  # n_playout is the run's already
    assert config.search.n_playout == 8 and config.train.lr == 1e-3
    assert RESUME_FIXED == ("seed", "board", "net")
    for override in ("seed=3", "board.width=7", "net.channels=8"):
        with pytest.raises(ConfigError, match=f"{override.split('=')[0]}: .*cannot change on resume"):
            resume_config(stored, [override])


def test_malformed_yaml_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("board:\n  width: [9\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: line 3, column 1"):
        load_config(path)
    # A file that cannot be read: one line, not "[Errno 2] No such file or directory: '...'"
    for where, why in ((tmp_path / "nope.yaml", "No such file or directory"), (tmp_path, "Is a directory")):
        with pytest.raises(ConfigError) as info:
            load_config(where)
        assert str(info.value) == f"cannot read the config {where}: {why}"


@pytest.mark.parametrize("override, message", [
    # eval.opponents go through the players' spec parser at load, not at the first evaluation
    ("eval.opponents=[minimax:0]", r"eval.opponents\[0\]: bad player spec 'minimax:0' \(DEPTH must be"),
    ("eval.opponents=[minimax:2, pure:-5]", r"eval.opponents\[1\]: bad player spec 'pure:-5' \(PLAYOUTS must be"),
    ("eval.opponents=[random:5]", r"eval.opponents\[0\]: bad player spec 'random:5'$"),
    ("eval.opponents=[human]", r"eval.opponents\[0\]: 'human': expected random"),
    # one playout only expands the root: no move gets a visit (was: "Probabilities contain NaN")
    ("search.fast_playouts=1", "search.fast_playouts: must be 0 .off. or in 2..n_playout - 1"),
    ("eval.n_playout=1", r"eval.n_playout: must be in 2\.\."),
    # sizes far past any useful run: an error naming the key, not an allocation or a traceback later
    ("train.buffer_size=1000000000000", r"train.buffer_size: 1000000000000 positions of 9x9 need .* GiB"),
    ("net.channels=100000000", r"net.channels: must be in 1..512"),
    ("net.channels=600", r"net.channels: must be in 1..512"),  # the net's own bound, not later at the run's start
    ("net.blocks=41", r"net.blocks: must be in 1..40"),
    ("train.lr=1" + "0" * 400, r"train.lr: expected a finite number, got 10{19}\.\.\.$"),  # past any float
    ("train.lr=1e300", r"train.lr: must be in \(0, 1\]"),
    ("board.width=100000", r"board.width: must be in 1..32"),
    ("search.n_playout=1000000000", r"search.n_playout: must be in 2..100000"),
    ("seed=-1", r"^seed: must be in 0..4294967295, got -1"),
    ("seed=99999999999", r"^seed: must be in 0..4294967295"),
    ("train.max_minutes=-5", r"train.max_minutes: must be >= 0"),
    # a --set value that is not YAML
    ("search.n_playout=[", r"^override 'search.n_playout=\[': the value is not valid YAML \("),
])
def test_hostile_values_are_one_line_errors_naming_the_key(override, message):
    with pytest.raises(ConfigError, match=message) as caught:
        load_config("configs/9x9.yaml", [override])
    assert "\n" not in str(caught.value)


def test_parse_spec_agrees_with_make_player():
    from gomoku.players import make_player, parse_spec

    for spec in ("random", "heuristic", "minimax:1", "pure:3", "az:some/file.pt:400", "human"):
        parse_spec(spec)  # well-formed: no error, nothing built (the az file does not exist)
    for spec in ("minimax:0", "minimax:x", "pure:-5", "pure:", "random:5", "az:400", "nope", "heuristic:1"):
        with pytest.raises(ValueError, match="bad player spec") as by_validate:
            parse_spec(spec)
        with pytest.raises(ValueError) as by_make:
            make_player(spec)
        assert str(by_validate.value) == str(by_make.value)


def test_bad_variant_override_is_a_config_error(tmp_path):
    from gomoku.lab.ablation import Variant, run_ablation

    with pytest.raises(ConfigError, match="override 'search.n_playout=\\[': the value is not valid YAML"):
        run_ablation("configs/smoke.yaml", [Variant.parse("bad search.n_playout=[")], tmp_path / "abl", 1.0,
                     ["random"], 2)
    assert not (tmp_path / "abl").exists()  # checked before anything ran


def test_the_configs_net_bounds_are_the_nets():
    from gomoku.training import config
    from nets import model

    assert (config.MAX_CHANNELS, config.MAX_BLOCKS, config.MAX_BOARD) == (
        model.MAX_CHANNELS, model.MAX_BLOCKS, model.MAX_BOARD_SIDE)


@pytest.mark.parametrize(("text", "problem"), [
    ("", "the config is empty (expected a mapping of sections, as configs/9x9.yaml)"),
    ("# only a comment\n", "the config is empty (expected a mapping of sections, as configs/9x9.yaml)"),
    ("- a\n- list\n", "expected a mapping of sections at the top level, got a YAML list"),
    ("42\n", "expected a mapping of sections at the top level, got a YAML int"),
])
def test_an_empty_or_non_mapping_config_is_an_error_naming_the_file(tmp_path, text, problem):
    """--config /dev/null started a full default run."""
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value) == f"{path}: {problem}"
    with pytest.raises(ConfigError, match="^/dev/null: the config is empty"):
        load_config("/dev/null")
