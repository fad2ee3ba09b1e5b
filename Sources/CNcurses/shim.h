#ifndef FLEETTRUST_CNCURSES_SHIM_H
#define FLEETTRUST_CNCURSES_SHIM_H
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <langinfo.h>
#include <curses.h>
#include <term.h>

static inline int ft_attr_bold(void) { return (int)A_BOLD; }
static inline int ft_attr_reverse(void) { return (int)A_REVERSE; }
static inline int ft_attr_underline(void) { return (int)A_UNDERLINE; }
static inline int ft_attr_dim(void) { return (int)A_DIM; }
static inline int ft_attr_normal(void) { return (int)A_NORMAL; }
static inline int ft_color_pair(int n) { return (int)COLOR_PAIR(n); }
static inline int ft_lines(void) { return LINES; }
static inline int ft_cols(void) { return COLS; }
static inline int ft_colors(void) { return COLORS; }
static inline WINDOW *ft_stdscr(void) { return stdscr; }
/* Whether the terminal restores the screen it had before curses started (rmcup); vt100 does not. */
static inline int ft_has_alternate_screen(void) {
    char *leave = tigetstr("rmcup");
    return leave != 0 && leave != (char *)-1 && leave[0] != 0;
}
static inline int ft_key_resize(void) { return KEY_RESIZE; }
static inline int ft_key_mouse(void) { return KEY_MOUSE; }
/* Frees the terminal description a setupterm() call loaded (cur_term is a C global). */
static inline void ft_release_terminal(void) { del_curterm(cur_term); }
/* The character set of the locale setlocale() chose, e.g. "UTF-8" or "ANSI_X3.4-1968". */
static inline const char *ft_locale_codeset(void) { return nl_langinfo(CODESET); }
#endif
