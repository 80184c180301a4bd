"""The HTML entities that can spell part of a tag, by what they fold to (generated, then checked).

Decoding an entity matters to the fence only when its folded value (kenning/context/invisible.py:
``fold_char``) could be part of a tag: ASCII or white space, or nothing at all (``&zwj;``, ``&shy;``).
Every other entity decodes to a character no tag name holds, so the fence leaves it encoded. Kept
here because ``html.entities`` costs a hook ~7 ms to import (it loads ``re``);
tests/unit/test_fence_unicode.py derives this table from ``html.entities.html5`` and ``fold_char``.
"""

from __future__ import annotations

# Lines of: the folded value as hex code points joined by "+" ("0": nothing), then entity names as
# written after "&" (";" included when the name needs one; the legacy names decode without it).
FOLDED = """
0 ApplyFunction; DotDot; DownBreve; InvisibleComma; InvisibleTimes; NegativeMediumSpace; NegativeThickSpace;
0 NegativeThinSpace; NegativeVeryThinSpace; NoBreak; TripleDot; ZeroWidthSpace; af; ic; it; lrm; rlm; shy
0 shy; tdot; zwj; zwnj;
20 Breve; Cedilla; DiacriticalAcute; DiacriticalDot; DiacriticalDoubleAcute; DiacriticalTilde; Dot;
20 DoubleDot; MediumSpace; NonBreakingSpace; OverBar; ThinSpace; VeryThinSpace; acute acute; breve; cedil
20 cedil; dblac; die; dot; emsp13; emsp14; emsp; ensp; hairsp; macr macr; nbsp nbsp; numsp; ogon; oline;
20 puncsp; ring; strns; thinsp; tilde; uml uml;
20+20 ThickSpace;
21 excl;
22 QUOT QUOT; quot quot;
23 num;
24 dollar;
25 percnt;
26 AMP AMP; amp amp;
27 apos;
28 lpar;
29 rpar;
2a ast; midast;
2b plus;
2c comma;
2d dash; horbar; hybull; hyphen; mdash; minus; ndash;
2e period;
2e+2e nldr;
2e+2e+2e hellip; mldr;
2f frasl; sol;
31 sup1 sup1;
31+2f+32 frac12 frac12; half;
31+2f+33 frac13;
31+2f+34 frac14 frac14;
31+2f+35 frac15;
31+2f+36 frac16;
31+2f+38 frac18;
32 sup2 sup2;
32+2f+33 frac23;
32+2f+35 frac25;
33 sup3 sup3;
33+2f+34 frac34 frac34;
33+2f+35 frac35;
33+2f+38 frac38;
34+2f+35 frac45;
35+2f+36 frac56;
35+2f+38 frac58;
37+2f+38 frac78;
3a colon;
3a+3a+3d Colone;
3b semi;
3c LT LT; LeftAngleBracket; NotLess; lang; langle; lsaquo; lt lt; nless; nlt; nvlt;
3d NotEqual; bne; equals; ne;
3d+3d Equal;
3e GT GT; NotGreater; RightAngleBracket; gt gt; ngt; ngtr; nvgt; rang; rangle; rsaquo;
3f quest;
40 commat;
41 Aacute Aacute; Abreve; Acirc Acirc; Afr; Agrave Agrave; Amacr; Aogon; Aopf; Aring Aring; Ascr; Atilde
41 Atilde; Auml Auml; angst;
42 Bernoullis; Bfr; Bopf; Bscr; bernou;
43 Cacute; Cayleys; Ccaron; Ccedil Ccedil; Ccirc; Cdot; Cfr; Copf; Cscr; complexes;
44 CapitalDifferentialD; DD; Dcaron; Dfr; Dopf; Dscr;
45 Eacute Eacute; Ecaron; Ecirc Ecirc; Edot; Efr; Egrave Egrave; Emacr; Eogon; Eopf; Escr; Euml Euml;
45 expectation;
46 Ffr; Fopf; Fouriertrf; Fscr;
47 Gbreve; Gcedil; Gcirc; Gdot; Gfr; Gopf; Gscr;
48 Hcirc; Hfr; HilbertSpace; Hopf; Hscr; Poincareplane; hamilt; quaternions;
49 Iacute Iacute; Icirc Icirc; Idot; Ifr; Igrave Igrave; Im; Imacr; Iogon; Iopf; Iscr; Itilde; Iuml Iuml;
49 image; imagline; imagpart;
49+4a IJlig;
4a Jcirc; Jfr; Jopf; Jscr;
4b Kcedil; Kfr; Kopf; Kscr;
4c Lacute; Laplacetrf; Lcaron; Lcedil; Lfr; Lopf; Lscr; lagran;
4d Mellintrf; Mfr; Mopf; Mscr; phmmat;
4e Nacute; Ncaron; Ncedil; Nfr; Nopf; Nscr; Ntilde Ntilde; naturals;
4e+6f numero;
4f Oacute Oacute; Ocirc Ocirc; Odblac; Ofr; Ograve Ograve; Omacr; Oopf; Oscr; Otilde Otilde; Ouml Ouml;
50 Pfr; Popf; Pscr; primes;
51 Qfr; Qopf; Qscr; rationals;
52 Racute; Rcaron; Rcedil; Re; Rfr; Ropf; Rscr; real; realine; realpart; reals;
53 Sacute; Scaron; Scedil; Scirc; Sfr; Sopf; Sscr; circledS; oS;
54 Tcaron; Tcedil; Tfr; Topf; Tscr;
54+4d TRADE; trade;
55 Uacute Uacute; Ubreve; Ucirc Ucirc; Udblac; Ufr; Ugrave Ugrave; Umacr; Uogon; Uopf; Uring; Uscr; Utilde;
55 Uuml Uuml;
56 Vfr; Vopf; Vscr;
57 Wcirc; Wfr; Wopf; Wscr;
58 Xfr; Xopf; Xscr;
59 Yacute Yacute; Ycirc; Yfr; Yopf; Yscr; Yuml;
5a Zacute; Zcaron; Zdot; Zfr; Zopf; Zscr; integers; zeetrf;
5b lbrack; lsqb;
5c bsol;
5d rbrack; rsqb;
5e Hat;
5f UnderBar; lowbar;
60 DiacriticalGrave; grave;
61 Acy; Alpha; aacute aacute; abreve; acirc acirc; acy; afr; agrave agrave; alpha; amacr; aogon; aopf; aring
61 aring; ascr; atilde atilde; auml auml; ordf ordf;
62 bfr; bopf; bscr;
63 Scy; cacute; ccaron; ccedil ccedil; ccirc; cdot; cfr; copf; cscr; scy;
63+2f+6f incare;
64 DifferentialD; dcaron; dd; dfr; dopf; dscr;
65 Epsilon; ExponentialE; IEcy; IOcy; eacute eacute; ecaron; ecirc ecirc; edot; ee; efr; egrave egrave;
65 emacr; eogon; eopf; epsi; epsilon; epsiv; escr; euml euml; exponentiale; iecy; iocy; straightepsilon;
65 varepsilon;
66 ffr; fopf; fscr;
66+66 fflig;
66+66+69 ffilig;
66+66+6c ffllig;
66+69 filig;
66+6a fjlig;
66+6c fllig;
67 gacute; gbreve; gcirc; gdot; gfr; gopf; gscr;
68 Eta; Ncy; hcirc; hfr; hopf; hscr; planckh;
69 ImaginaryI; Iota; Iukcy; YIcy; iacute iacute; icirc icirc; ifr; igrave igrave; ii; imacr; imath; inodot;
69 iogon; iopf; iota; iscr; itilde; iukcy; iuml iuml; yicy;
69+6a ijlig;
6a jcirc; jfr; jopf; jscr;
6b KJcy; Kappa; Kcy; kappa; kappav; kcedil; kcy; kfr; kjcy; kopf; kscr; varkappa;
6c ell; lacute; lcaron; lcedil; lfr; lopf; lscr;
6d Mcy; Mu; mcy; mfr; mopf; mscr;
6e Nu; nacute; ncaron; ncedil; nfr; nopf; nscr; ntilde ntilde;
6f Ocy; Omicron; oacute oacute; ocirc ocirc; ocy; odblac; ofr; ograve ograve; omacr; omicron; oopf; order;
6f orderof; ordm ordm; oscr; otilde otilde; ouml ouml;
70 Rcy; Rho; pfr; popf; pscr; rcy; rho; rhov; varrho;
71 qfr; qopf; qscr;
72 racute; rcaron; rcedil; rfr; ropf; rscr;
73 DScy; dscy; sacute; scaron; scedil; scirc; sfr; sopf; sscr;
74 Tau; Tcy; tau; tcaron; tcedil; tcy; tfr; topf; tscr;
75 uacute uacute; ubreve; ucirc ucirc; udblac; ufr; ugrave ugrave; umacr; uogon; uopf; upsi; upsilon; uring;
75 uscr; utilde; uuml uuml;
76 vfr; vopf; vscr;
77 wcirc; wfr; wopf; wscr;
78 Chi; KHcy; chi; khcy; xfr; xopf; xscr;
79 Ubrcy; Ucy; gamma; ubrcy; ucy; yacute yacute; ycirc; yfr; yopf; yscr; yuml yuml;
7a zacute; zcaron; zdot; zfr; zopf; zscr;
7b lbrace; lcub;
7c VerticalLine; verbar; vert;
7d rbrace; rcub;
9 Tab;
a NewLine;
"""

_names: dict[str, str] = {}


def names() -> dict[str, str]:
    """Entity name (as written after ``&``) → the folded value it decodes to."""
    if not _names:
        for line in FOLDED.split("\n")[1:-1]:
            key, *body = line.split()
            value = "" if key == "0" else "".join(chr(int(h, 16)) for h in key.split("+"))
            for name in body:
                _names[name] = value
    return _names
