# termcolor, as tutorials import it to colour exception names: ANSI SGR codes around the text.
import os
import sys

ATTRIBUTES = {'bold': 1, 'dark': 2, 'underline': 4, 'blink': 5, 'reverse': 7, 'concealed': 8}
COLORS = {'black': 30, 'grey': 30, 'red': 31, 'green': 32, 'yellow': 33, 'blue': 34, 'magenta': 35, 'cyan': 36,
          'light_grey': 37, 'white': 97, 'dark_grey': 90, 'light_red': 91, 'light_green': 92, 'light_yellow': 93,
          'light_blue': 94, 'light_magenta': 95, 'light_cyan': 96}
HIGHLIGHTS = {'on_' + name: code + 10 for name, code in COLORS.items()}
RESET = '\033[0m'


def _can_do_colour(no_color=None, force_color=None):
    if no_color is not None and no_color:
        return False
    if force_color is not None and force_color:
        return True
    if os.environ.get('ANSI_COLORS_DISABLED') or os.environ.get('NO_COLOR'):
        return False
    if os.environ.get('FORCE_COLOR'):
        return True
    # termcolor before 2.1 coloured unconditionally; SHARDSCOPE_TERMCOLOR_ALWAYS=1 recreates such a setup.
    if os.environ.get('SHARDSCOPE_TERMCOLOR_ALWAYS'):
        return True
    return hasattr(sys.stdout, 'isatty') and sys.stdout.isatty() and os.environ.get('TERM') != 'dumb'


def colored(text, color=None, on_color=None, attrs=None, *, no_color=None, force_color=None):
    result = str(text)
    if not _can_do_colour(no_color=no_color, force_color=force_color):
        return result
    if color is not None:
        result = f'\033[{COLORS[color]}m{result}'
    if on_color is not None:
        result = f'\033[{HIGHLIGHTS[on_color]}m{result}'
    for attr in attrs or ():
        result = f'\033[{ATTRIBUTES[attr]}m{result}'
    return result + RESET


def cprint(text, color=None, on_color=None, attrs=None, *, no_color=None, force_color=None, **kwargs):
    print(colored(text, color, on_color, attrs, no_color=no_color, force_color=force_color), **kwargs)
