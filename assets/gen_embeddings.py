#!/usr/bin/python3
"""Write assets/embeddings.txt for attnviz from readable per-word feature specs.

Run:  /usr/bin/python3 assets/gen_embeddings.py        (standard library only)

Every word gets a hand-made 16-dimensional vector whose dimensions mean
something a teacher can explain:

    grammar          noun verb adj func
    who/where/when   person place time motion
    topics           transport finance sport nature
    other            feeling food animal plural

so each of 4 attention heads can look at one coherent group of four.

Spec format (SPEC below): one word a line, then its features.
    word   feature=value feature ...
A bare feature means 1.0; features not named are 0. "as=other" (first)
starts from the vector of a word specified earlier, so a translation reads
"voiture  as=car": the features of its English word, its strongest one a
tenth stronger (own_copy: close, not equal). Lines starting
with "##" are section comments. Typical values:
    content word    noun/verb/adj = 1, its topic(s) 0.6-1.5
    function word   func 0.3-0.5, maybe a small hint (place/time)
    punctuation     func 0.2
So "why does train attend to station?" -> "both are transport nouns": their
dot product is noun*noun + transport*transport.
"""
import os
import sys

DIMS = ("noun verb adj func person place time motion "
        "transport finance sport nature feeling food animal plural").split()

SPEC = r"""
## ---- punctuation: tokens of their own, tiny weight -------------------
.            func=.2
,            func=.2
;            func=.2
:            func=.2
!            func=.2 feeling=.2
?            func=.2
"            func=.2
(            func=.2
)            func=.2
[            func=.2
]            func=.2
{            func=.2
}            func=.2

## ---- determiners and articles --------------------------------------
the          func=.5
a            func=.5
an           func=.5
this         func=.5
that         func=.5
these        func=.5 plural=.6
those        func=.5 plural=.6
some         func=.5 plural=.4
any          func=.5
every        func=.5
each         func=.5
no           func=.5
all          func=.5 plural=.6
both         func=.5 plural=.6
many         func=.4 adj=.3 plural=.8
much         func=.4 adj=.3
more         func=.4 adj=.3
most         func=.4 adj=.3
few          func=.4 adj=.3 plural=.6
other        func=.4 adj=.4
another      func=.4 adj=.3
such         func=.4 adj=.3
whole        func=.3 adj=.6
my           func=.5 person=.3
your         func=.5 person=.3
his          func=.5 person=.3
her          func=.4 person=.6 noun=.2
its          func=.5 noun=.2 animal=.2
our          func=.5 person=.3 plural=.4
their        func=.5 person=.3 plural=.6

## ---- pronouns: person-like, a little noun ----------------------------
## "it" is the pronoun for things and animals, so it carries a little noun
## and a little animal (but no person).
i            func=.4 noun=.3 person
me           func=.4 noun=.3 person
you          func=.4 noun=.3 person
he           func=.4 noun=.3 person
him          func=.4 noun=.3 person
she          func=.4 noun=.3 person
we           func=.4 noun=.3 person plural
us           func=.4 noun=.3 person plural
they         func=.4 noun=.3 person=.6 plural
them         func=.4 noun=.3 person=.6 plural
it           func=.4 noun=.5 animal=.3
myself       func=.4 noun=.3 person
yourself     func=.4 noun=.3 person
himself      func=.4 noun=.3 person
herself      func=.4 noun=.3 person
itself       func=.4 noun=.5 animal=.3
themselves   func=.4 noun=.3 person=.6 plural
who          func=.5 person=.5
whom         func=.5 person=.5
whose        func=.5 person=.4
what         func=.5
which        func=.5
where        func=.5 place=.5
why          func=.5
how          func=.5
someone      func=.3 noun=.4 person=.8
somebody     func=.3 noun=.4 person=.8
everyone     func=.3 noun=.4 person=.8 plural=.5
everybody    func=.3 noun=.4 person=.8 plural=.5
nobody       func=.3 noun=.4 person=.8
something    func=.3 noun=.5
nothing      func=.3 noun=.5
everything   func=.3 noun=.5
anything     func=.3 noun=.5
one          func=.3 noun=.3
two          func=.3 adj=.3 plural=.8
three        func=.3 adj=.3 plural=.8
four         func=.3 adj=.3 plural=.8
five         func=.3 adj=.3 plural=.8
ten          func=.3 adj=.3 plural=.8
hundred      func=.3 adj=.3 plural=.8
seven        func=.3 adj=.3 plural=.8 time=.2

## ---- prepositions: func, with a small hint of place or time ----------
on           func=.5 place=.2 time=.1
at           func=.5 place=.2 time=.1
in           func=.5 place=.2 time=.1
of           func=.5
to           func=.5 motion=.2
from         func=.5 motion=.2
for          func=.5
with         func=.5
by           func=.5 place=.1
about        func=.5
into         func=.5 motion=.3
onto         func=.5 motion=.3
over         func=.5 place=.2 motion=.2
under        func=.5 place=.3
near         func=.5 place=.4
behind       func=.5 place=.4
between      func=.5 place=.3
through      func=.5 motion=.3
across       func=.5 motion=.3 place=.2
along        func=.5 motion=.3 place=.2
around       func=.5 place=.3
towards      func=.5 motion=.4
against      func=.5 sport=.2
after        func=.5 time=.5
before       func=.5 time=.5
during       func=.5 time=.5
until        func=.5 time=.5
since        func=.5 time=.4
without      func=.5
inside       func=.5 place=.4
outside      func=.5 place=.4
up           func=.4 motion=.4
down         func=.4 motion=.4
out          func=.4 motion=.4
off          func=.4 motion=.3
away         func=.4 motion=.5
back         func=.4 motion=.4
home         noun=.7 place=.9
like         func=.4 verb=.4 feeling=.5

## ---- conjunctions ------------------------------------------------------
and          func=.5
or           func=.5
but          func=.5
because      func=.5
so           func=.5
if           func=.5
when         func=.5 time=.4
while        func=.5 time=.4
than         func=.5
then         func=.4 time=.5
although     func=.5
as           func=.5

## ---- auxiliaries and "be": mostly grammar; plural forms carry plural ---
be           verb=.6 func=.4
am           verb=.6 func=.4
is           verb=.6 func=.4
are          verb=.6 func=.4 plural
was          verb=.6 func=.4
were         verb=.6 func=.4 plural
been         verb=.6 func=.4
being        verb=.6 func=.4
have         verb=.5 func=.4
has          verb=.5 func=.4
had          verb=.5 func=.4
do           verb=.5 func=.4
does         verb=.5 func=.4
did          verb=.5 func=.4
will         verb=.5 func=.4 time=.3
would        verb=.5 func=.4
can          verb=.5 func=.4
could        verb=.5 func=.4
should       verb=.5 func=.4
must         verb=.5 func=.4
may          verb=.5 func=.4
might        verb=.5 func=.4
shall        verb=.5 func=.4 time=.3
not          func=.5
didn't       verb=.5 func=.5
don't        verb=.5 func=.5
doesn't      verb=.5 func=.5
isn't        verb=.5 func=.5
wasn't       verb=.5 func=.5
aren't       verb=.5 func=.5 plural
weren't      verb=.5 func=.5 plural
can't        verb=.5 func=.5
won't        verb=.5 func=.5 time=.3
it's         verb=.4 func=.5 noun=.4 animal=.2
i'm          verb=.4 func=.5 noun=.3 person
let's        verb=.5 func=.5 person=.5 plural=.5

## ---- adverbs -------------------------------------------------------------
very         func=.3 adj=.4
too          func=.3 adj=.4
also         func=.4
just         func=.4
only         func=.4
still        func=.3 time=.4
already      func=.3 time=.5
never        func=.3 time=.5
always       func=.3 time=.5
often        func=.3 time=.5
sometimes    func=.3 time=.5
soon         func=.3 time=.7
now          func=.3 time=.7
here         func=.3 place=.7
there        func=.3 place=.7
again        func=.3 time=.4
instead      func=.4
together     func=.3 adj=.3 plural=.4
really       func=.3 adj=.4
almost       func=.4
quickly      adj=.6 motion=.5
slowly       adj=.6 motion=.5
yes          func=.4 feeling=.3
well         adj=.5 feeling=.3

## ---- time words ----------------------------------------------------------
time         noun time=1.2
times        noun time=1.2 plural
day          noun time=1.2
days         noun time=1.2 plural
night        noun time=1.2 nature=.3
nights       noun time=1.2 nature=.3 plural
morning      noun time=1.2
evening      noun time=1.2
afternoon    noun time=1.2
noon         noun time=1.2
week         noun time=1.2
weeks        noun time=1.2 plural
weekend      noun time=1.2
month        noun time=1.2
months       noun time=1.2 plural
year         noun time=1.2
years        noun time=1.2 plural
hour         noun time=1.2
hours        noun time=1.2 plural
minute       noun time=1.2
minutes      noun time=1.2 plural
moment       noun time=1.1
summer       noun time=1.1 nature=.5
winter       noun time=1.1 nature=.5
spring       noun time=1.1 nature=.6
autumn       noun time=1.1 nature=.5
season       noun time=1.1 nature=.3 sport=.3
monday       noun time=1.2
tuesday      noun time=1.2
wednesday    noun time=1.2
thursday     noun time=1.2
friday       noun time=1.2
saturday     noun time=1.2
sunday       noun time=1.2
today        noun=.6 time=1.2
tomorrow     noun=.6 time=1.2
yesterday    noun=.6 time=1.2
tonight      noun=.6 time=1.2
birthday     noun time=1 feeling=.4
holiday      noun time=.8 transport=.3 feeling=.4
clock        noun time=1
history      noun time=.8
future       noun time=1
past         noun=.6 adj=.4 time=1
century      noun time=1.2
early        adj time=1
late         adj time=1
last         adj=.8 time=.8
next         adj=.8 time=.8
first        adj=.8 time=.5
second       adj=.8 time=.5
ago          func=.3 time=1
old          adj time=.6
new          adj time=.5
young        adj time=.4 person=.3

## ---- transport (vehicles, stations, travelling) --------------------------
train        noun transport=1.5 motion=.5
trains       noun transport=1.5 motion=.5 plural
car          noun transport=1.3 motion=.4
cars         noun transport=1.3 motion=.4 plural
bus          noun transport=1.3 motion=.4
buses        noun transport=1.3 motion=.4 plural
plane        noun transport=1.3 motion=.5
planes       noun transport=1.3 motion=.5 plural
boat         noun transport=1.2 motion=.4 nature=.4
boats        noun transport=1.2 motion=.4 nature=.4 plural
ship         noun transport=1.2 motion=.4 nature=.4
bike         noun transport=1.2 motion=.4 sport=.3
bicycle      noun transport=1.2 motion=.4 sport=.3
taxi         noun transport=1.3 motion=.4
truck        noun transport=1.3 motion=.4
station      noun place transport=1.2
stations     noun place transport=1.2 plural
airport      noun place transport=1.2
platform     noun place=.8 transport=1
harbour      noun place transport=1 nature=.4
ticket       noun transport=1 finance=.4
tickets      noun transport=1 finance=.4 plural
road         noun place=.8 transport=.8
roads        noun place=.8 transport=.8 plural
street       noun place transport=.5
streets      noun place transport=.5 plural
bridge       noun place=.8 transport=.7
railway      noun transport=1.3
journey      noun transport=1 motion=.6
trip         noun transport=.8 motion=.5
engine       noun transport=1
wheel        noun transport=.9
driver       noun person transport=1
passenger    noun person transport=1
passengers   noun person transport=1 plural
pilot        noun person transport=1
traffic      noun transport=1 place=.3

## ---- motion and travel verbs ----------------------------------------------
go           verb motion
goes         verb motion
went         verb motion
gone         verb motion
going        verb motion
come         verb motion
comes        verb motion
came         verb motion
coming       verb motion
leave        verb motion
leaves       verb=.7 noun=.5 motion=.7 nature=.6 plural=.4
left         verb motion place=.2
leaving      verb motion
arrive       verb motion transport=.3
arrives      verb motion transport=.3
arrived      verb motion transport=.3
run          verb motion sport=.5
runs         verb motion sport=.5
ran          verb motion sport=.5
running      verb motion sport=.5
walk         verb motion
walks        verb motion
walked       verb motion
walking      verb motion
drive        verb motion transport=.8
drove        verb motion transport=.8
driving      verb motion transport=.8
ride         verb motion transport=.7
rode         verb motion transport=.7
fly          verb motion transport=.5 animal=.3
flew         verb motion transport=.5 animal=.3
flying       verb motion transport=.5 animal=.3
travel       verb motion transport=.8
travelled    verb motion transport=.8
cross        verb motion place=.3
crossed      verb motion place=.3
drifted      verb motion nature=.3
sit          verb motion=.2
sat          verb motion=.2
stand        verb motion=.2
stood        verb motion=.2
swim         verb motion sport=.5 nature=.3
swam         verb motion sport=.5 nature=.3
jump         verb motion sport=.3
jumped       verb motion sport=.3
fall         verb motion
fell         verb motion
climb        verb motion sport=.3 nature=.3
climbed      verb motion sport=.3 nature=.3
move         verb motion
moved        verb motion
stop         verb motion=.6
stopped      verb motion=.6
wait         verb time=.5
waited       verb time=.5
take         verb motion=.3
took         verb motion=.3
bring        verb motion=.4
brought      verb motion=.4
carry        verb motion=.4
carried      verb motion=.4
turn         verb motion=.6
return       verb motion
returned     verb motion
follow       verb motion=.6
visit        verb motion=.5 place=.3
visited      verb motion=.5 place=.3
chase        verb motion animal=.3
chased       verb motion animal=.3

## ---- places and things found in them --------------------------------------
place        noun place
city         noun place
town         noun place
village      noun place
country      noun place
world        noun place
house        noun place
houses       noun place plural
building     noun place
school       noun place person=.3
garden       noun place nature=.6
park         noun place nature=.5
room         noun place
kitchen      noun place food=.6
office       noun place finance=.3
shop         noun place finance=.5
shops        noun place finance=.5 plural
market       noun place finance=.7 food=.4
church       noun place
hospital     noun place person=.3
library      noun place
museum       noun place
theatre      noun place feeling=.3
cinema       noun place feeling=.3
restaurant   noun place food
cafe         noun place food
london       noun place=1.3
paris        noun place=1.3
france       noun place=1.3
england      noun place=1.3
door         noun place=.4
window       noun place=.4
wall         noun place=.4
floor        noun place=.4
fence        noun place=.4
table        noun place=.4
chair        noun place=.3
bed          noun place=.3
cabinet      noun place=.3
cabinets     noun place=.3 plural
box          noun
bag          noun transport=.3
suitcase     noun transport=.6
mat          noun place=.3
hole         noun place=.4 nature=.4
key          noun
keys         noun plural
coat         noun
book         noun
books        noun plural
letter       noun
phone        noun
picture      noun
cards        noun plural sport=.4
trophy       noun sport
prize        noun sport=.8 finance=.6

## ---- finance -----------------------------------------------------------------
## "bank" has both meanings in one vector: money (finance) and river (nature).
bank         noun place=.8 finance=1.2 nature=.6
banks        noun place=.8 finance=1.2 nature=.6 plural
money        noun finance=1.5
check        noun verb=.3 finance=1.2
checks       noun verb=.3 finance=1.2 plural
cheque       noun finance=1.2
cash         noun=.8 verb=.5 finance=1.4
cashed       verb finance=1.2
coin         noun finance=1.2
coins        noun finance=1.2 plural
price        noun finance=1.2
prices       noun finance=1.2 plural
cost         noun=.6 verb=.6 finance=1.2
loan         noun finance=1.3
loans        noun finance=1.3 plural
account      noun finance=1.2
accounts     noun finance=1.2 plural
payment      noun finance=1.2
debt         noun finance=1.2 feeling=.3
credit       noun finance=1.2
tax          noun finance=1.2
salary       noun finance=1.2
bill         noun finance=1.1
bills        noun finance=1.1 plural
dollar       noun finance=1.3
dollars      noun finance=1.3 plural
euro         noun finance=1.3
euros        noun finance=1.3 plural
pound        noun finance=1.3
pounds       noun finance=1.3 plural
profit       noun finance=1.3
wallet       noun finance=1
purse        noun finance=1
receipt      noun finance=1
interest     noun finance=.8 feeling=.4
pay          verb finance=1.2
paid         verb finance=1.2
buy          verb finance=1.1
bought       verb finance=1.1
sell         verb finance=1.1
sells        verb finance=1.1
sold         verb finance=1.1
spend        verb finance=1
spent        verb finance=1
save         verb finance=.8
saved        verb finance=.8
borrow       verb finance=1.1
borrowed     verb finance=1.1
lend         verb finance=1.1
lent         verb finance=1.1
deposit      verb=.7 noun=.5 finance=1.2
deposited    verb finance=1.2
earn         verb finance=1.1
earned       verb finance=1.1
owe          verb finance=1.1
approve      verb finance=.5
approved     verb finance=.5
rich         adj finance=1
poor         adj finance=.9 feeling=.3
cheap        adj finance=1
expensive    adj finance=1
free         adj finance=.6
banker       noun person finance

## ---- sport -------------------------------------------------------------------
## "bat" is both a sports bat and an animal.
cricket      noun sport=1.5
football     noun sport=1.5
soccer       noun sport=1.5
tennis       noun sport=1.5
golf         noun sport=1.5
rugby        noun sport=1.5
hockey       noun sport=1.5
match        noun sport=1.3
game         noun sport=1.2
games        noun sport=1.2 plural
team         noun sport=1.2 person=.4
teams        noun sport=1.2 person=.4 plural
club         noun sport=1 place=.4
player       noun person sport=1.2
players      noun person sport=1.2 plural
captain      noun person sport=.8
coach        noun person sport=1 transport=.3
referee      noun person sport=1.2
crowd        noun person=.7 sport=.5 plural=.5
ball         noun sport=1.3
bat          noun sport animal nature=.3
goal         noun sport=1.3
race         noun sport=1.2 motion=.5
pitch        noun sport=1.1 place=.5 nature=.3
stadium      noun place sport=1.1
medal        noun sport=1.1
champion     noun person sport=1.2
play         verb noun=.4 sport=.9 feeling=.3
plays        verb noun=.4 sport=.9 feeling=.3
played       verb sport=.9
playing      verb sport=.9
win          verb sport=1.1 feeling=.3
won          verb sport=1.1 feeling=.3
lose         verb sport=1.1 feeling=.3
lost         verb sport=.9 feeling=.3
score        verb=.7 noun=.5 sport=1.1
scored       verb sport=1.1
hit          verb sport=.9
throw        verb sport=.8 motion=.5
threw        verb sport=.8 motion=.5
catch        verb sport=.8 motion=.4
caught       verb sport=.8 motion=.4
kick         verb sport=.9 motion=.4
kicked       verb sport=.9 motion=.4
swing        verb sport=.8 motion=.5
swung        verb sport=.8 motion=.5
cheered      verb sport=.6 feeling=.8
cancelled    verb sport=.3 time=.4

## ---- nature and weather ------------------------------------------------------
river        noun place=.8 nature=1.2
rivers       noun place=.8 nature=1.2 plural
water        noun nature=1.2 food=.3
sea          noun place=.6 nature=1.3
ocean        noun place=.6 nature=1.3
lake         noun place=.6 nature=1.2
mountain     noun place=.6 nature=1.3
mountains    noun place=.6 nature=1.3 plural
hill         noun place=.6 nature=1.1
forest       noun place=.6 nature=1.3
tree         noun nature=1.3
trees        noun nature=1.3 plural
flower       noun nature=1.2
flowers      noun nature=1.2 plural
grass        noun nature=1.2
leaf         noun nature=1.2
sun          noun nature=1.2
moon         noun nature=1.2 time=.3
star         noun nature=1.2
stars        noun nature=1.2 plural
sky          noun nature=1.2
rain         noun=.8 verb=.4 nature=1.3
snow         noun=.8 verb=.4 nature=1.3
wind         noun nature=1.3
storm        noun nature=1.3
cloud        noun nature=1.2
weather      noun nature=1.3
ice          noun nature=1.1
fire         noun nature=1
air          noun nature=1
earth        noun nature=1.2 place=.4
rock         noun nature=1.1
stone        noun nature=1.1
sand         noun nature=1.1
beach        noun place=.7 nature=1.2
island       noun place=.8 nature=1.1
field        noun place=.7 nature=1 sport=.3
cave         noun place=.7 nature=1.1
farm         noun place nature=.6 animal=.6 food=.3
shine        verb nature=.8
grow         verb nature=.9
grew         verb nature=.9

## ---- feelings -------------------------------------------------------------
happy        adj feeling=1.3
## heureux, je, suis (lecture seed 002): close to happy, i, am, not copies,
## so "je suis heureux" over "i am happy" is a map of its own
heureux      adj=1.1 feeling=1.5
sad          adj feeling=1.3
angry        adj feeling=1.3
afraid       adj feeling=1.3
scared       adj feeling=1.3
tired        adj feeling=1
excited      adj feeling=1.3
worried      adj feeling=1.3
proud        adj feeling=1.2
lonely       adj feeling=1.2
calm         adj feeling=1
glad         adj feeling=1.2
nervous      adj feeling=1.2
surprised    adj feeling=1.2
bored        adj feeling=1.2
kind         adj feeling=.8 person=.3
friendly     adj feeling=.8 person=.3
wonderful    adj feeling=1
beautiful    adj feeling=.7
love         verb=.7 noun=.5 feeling=1.4
loved        verb feeling=1.4
loves        verb feeling=1.4
liked        verb feeling=1
hate         verb feeling=1.3
feel         verb feeling=1.1
felt         verb feeling=1.1
fear         noun=.5 verb=.6 feeling=1.3
feared       verb feeling=1.3
hope         noun=.5 verb=.6 feeling=1.1
want         verb feeling=.6
wanted       verb feeling=.6
need         verb feeling=.4
laugh        verb feeling=1.1
laughed      verb feeling=1.1
cry          verb feeling=1.1
cried        verb feeling=1.1
smile        verb=.6 noun=.5 feeling=1.1
smiled       verb feeling=1.1
enjoy        verb feeling=1.1
enjoyed      verb feeling=1.1
worry        verb feeling=1.1
joy          noun feeling=1.3
anger        noun feeling=1.3
happiness    noun feeling=1.3
sadness      noun feeling=1.3
pain         noun feeling=1.2
heart        noun feeling=1
tears        noun feeling=1.2 plural

## ---- food and drink -----------------------------------------------------
food         noun food=1.4
bread        noun food=1.3
cake         noun food=1.3
cakes        noun food=1.3 plural
apple        noun food=1.3 nature=.3
apples       noun food=1.3 nature=.3 plural
banana       noun food=1.3 nature=.3
orange       noun=.8 adj=.4 food=1.2
fruit        noun food=1.3 nature=.4
rice         noun food=1.3
soup         noun food=1.3
pizza        noun food=1.3
cheese       noun food=1.3
milk         noun food=1.3 animal=.3
tea          noun food=1.2
coffee       noun food=1.2
juice        noun food=1.2
egg          noun food=1.3 animal=.3
eggs         noun food=1.3 animal=.3 plural
meat         noun food=1.3 animal=.4
sugar        noun food=1.2
salt         noun food=1.2
butter       noun food=1.2
chocolate    noun food=1.3 feeling=.3
sandwich     noun food=1.3
vegetables   noun food=1.3 nature=.4 plural
dinner       noun food=1.3 time=.4
lunch        noun food=1.3 time=.4
breakfast    noun food=1.3 time=.4
meal         noun food=1.3
hungry       adj food=1 feeling=.6
thirsty      adj food=1 feeling=.4
delicious    adj food=1 feeling=.4
eat          verb food=1.2
eats         verb food=1.2
ate          verb food=1.2
eaten        verb food=1.2
eating       verb food=1.2
drink        verb food=1.1
drank        verb food=1.1
cook         verb food=1.1 person=.3
cooked       verb food=1.1
bake         verb food=1.1
baked        verb food=1.1
taste        verb food=1
feed         verb food=1 animal=.4
fed          verb food=1 animal=.4

## ---- animals ("fish" and "chicken" are food too) -------------------------
animal       noun animal=1.5
animals      noun animal=1.5 plural
dog          noun animal=1.4
dogs         noun animal=1.4 plural
cat          noun animal=1.4
cats         noun animal=1.4 plural
bird         noun animal=1.4 nature=.3
birds        noun animal=1.4 nature=.3 plural
horse        noun animal=1.4 transport=.3
horses       noun animal=1.4 transport=.3 plural
cow          noun animal=1.4 food=.3
sheep        noun animal=1.4
fish         noun animal food nature=.3
chicken      noun animal food
mouse        noun animal=1.4
lion         noun animal=1.4
tiger        noun animal=1.4
elephant     noun animal=1.4
bear         noun animal=1.4 nature=.3
rabbit       noun animal=1.4
duck         noun animal=1.3 food=.3
bee          noun animal=1.2 nature=.4
bees         noun animal=1.2 nature=.4 plural
snake        noun animal=1.4
wolf         noun animal=1.4 nature=.3
fox          noun animal=1.4 nature=.3
monkey       noun animal=1.4
insect       noun animal=1.2 nature=.4
pet          noun animal=1.2 feeling=.3
zoo          noun place animal
bark         verb animal=1
barked       verb animal=1
barking      verb animal=1
bite         verb animal=.8 food=.3
bit          verb animal=.8 food=.3
sang         verb animal=.4 feeling=.6
sing         verb animal=.4 feeling=.6

## ---- people -----------------------------------------------------------------
person       noun person=1.3
people       noun person=1.3 plural
man          noun person=1.3
men          noun person=1.3 plural
woman        noun person=1.3
women        noun person=1.3 plural
boy          noun person=1.3
boys         noun person=1.3 plural
girl         noun person=1.3
girls        noun person=1.3 plural
child        noun person=1.3
children     noun person=1.3 plural
baby         noun person=1.3
friend       noun person=1.2 feeling=.3
friends      noun person=1.2 feeling=.3 plural
family       noun person=1.1 feeling=.3
mother       noun person=1.3
father       noun person=1.3
brother      noun person=1.3
sister       noun person=1.3
parents      noun person=1.3 plural
teacher      noun person=1.3
teachers     noun person=1.3 plural
student      noun person=1.3
students     noun person=1.3 plural
pupil        noun person=1.3
doctor       noun person=1.3
nurse        noun person=1.3
farmer       noun person=1.2 nature=.4 animal=.3
king         noun person=1.3
queen        noun person=1.3
police       noun person=1.2 plural=.5
neighbour    noun person=1.2 place=.3
je           func=.4 noun=.3 person=1.1

## ---- general verbs ---------------------------------------------------------
suis         verb=.7 func=.4
see          verb
saw          verb
seen         verb
watch        verb noun=.3 time=.3
watched      verb
watching     verb
look         verb
looked       verb
hear         verb
heard        verb
listen       verb
say          verb
says         verb
said         verb
tell         verb
told         verb
ask          verb
asked        verb
answer       verb noun=.4
speak        verb
spoke        verb
talk         verb
read         verb
write        verb
wrote        verb
think        verb
thought      verb
know         verb
knew         verb
learn        verb
learned      verb
teach        verb person=.3
taught       verb person=.3
make         verb
made         verb
give         verb
gave         verb
get          verb
got          verb
find         verb
found        verb
keep         verb
kept         verb
put          verb
open         verb adj=.4
opened       verb
close        verb adj=.4 place=.3
closed       verb adj=.4
help         verb
helped       verb
work         verb noun=.4 finance=.4
worked       verb finance=.4
live         verb place=.4
lives        verb place=.4
lived        verb place=.4
sleep        verb feeling=.3
slept        verb feeling=.3
wake         verb
woke         verb
build        verb place=.3
built        verb place=.3
break        verb
broke        verb
begin        verb time=.4
began        verb time=.4
finish       verb time=.4
finished     verb time=.4
try          verb
tried        verb
use          verb
used         verb
call         verb
called       verb
show         verb
showed       verb
meet         verb person=.3
met          verb person=.3
fit          verb
fits         verb
refuse       verb
refused      verb
needs        verb feeling=.4

## ---- adjectives (size, speed, colour, quality) --------------------------------
big          adj
small        adj
large        adj
little       adj
long         adj time=.3
short        adj time=.3
tall         adj
wide         adj place=.3
narrow       adj place=.3
deep         adj nature=.3
high         adj
low          adj
fast         adj motion=.7
slow         adj motion=.7
quick        adj motion=.5
hot          adj nature=.4
cold         adj nature=.4
warm         adj nature=.4
wet          adj nature=.4
dry          adj nature=.4
heavy        adj
light        adj nature=.3
hard         adj
soft         adj
easy         adj
difficult    adj
full         adj
empty        adj
clean        adj
dirty        adj
dark         adj time=.3 nature=.3
bright       adj nature=.3
strong       adj
weak         adj
busy         adj
quiet        adj
loud         adj
safe         adj feeling=.3
dangerous    adj feeling=.3
good         adj feeling=.4
bad          adj feeling=.4
great        adj feeling=.4
best         adj feeling=.3
better       adj feeling=.3
nice         adj feeling=.4
red          adj
blue         adj
green        adj nature=.3
white        adj
black        adj
yellow       adj
brown        adj
favourite    adj feeling=.5
famous       adj
important    adj
simple       adj
true         adj
wrong        adj
right        adj place=.2
different    adj
same         adj
real         adj
well-known   adj
ready        adj
sure         adj feeling=.3

## ---- translations (sentences/translation.txt) ----------------------------
## A translation starts from its English word's vector ("as=...", its
## strongest feature a tenth stronger: its own vector, close), so in
## cross-attention (queries from one sentence, keys from the other) each word
## finds its translation whatever the word order. No accents: the table is
## ASCII. (je, suis and heureux of lecture seed 002 are above: their own
## vectors, close to i, am and happy, so that seed's cross map is its own.)
## French
la           as=the
le           as=the
un           as=a
une          as=a
elle         as=she
j'ai         verb=.4 func=.5 noun=.3 person
vu           as=saw
voiture      as=car
chien        as=dog
pomme        as=apple
chocolat     as=chocolate
rouge        as=red
noir         as=black
chaud        as=hot
aime         as=loves
mange        as=eats
## German ("an" of "kommt ... an" is the English "an" above: one table)
der          as=the
den          as=the
dem          as=the
ich          as=i
habe         as=have
bin          as=am
mit          as=with
nach         as=to
um           as=at
im           as=in
gern         as=like
heute        as=today
sieben       as=seven
zug          as=train
junge        as=boy
garten       as=garden
kaffee       as=coffee
gesehen      as=seen
spielt       as=plays
trinke       as=drink
kommt        as=comes
## "gefahren": went by vehicle, so motion with a little transport
gefahren     verb motion transport=.5
"""


def copy_of(other, rows, lineno):
    """The vector of a word specified earlier (for "as=other")."""
    for word, vec in rows:
        if word == other:
            return list(vec)
    raise SystemExit(f"spec line {lineno}: as={other}: no such word above")


def own_copy(vec):
    """A translation's own vector, close to its word's: the strongest
    feature a tenth stronger (or weaker at the top of the range), so a
    cross map is never self-attention's numbers again."""
    k = max(range(len(vec)), key=lambda i: vec[i])
    v = round(vec[k] * 1.1, 3)
    vec[k] = v if v <= 1.5 else round(vec[k] * 0.9, 3)
    return vec


def parse_spec(text):
    """Return a list of (word, vector) in spec order; raise on errors."""
    rows, seen = [], {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("##"):
            continue
        parts = line.split()
        word, feats = parts[0], parts[1:]
        if word in seen:
            raise SystemExit(f"spec line {lineno}: duplicate word {word!r} "
                             f"(first on spec line {seen[word]})")
        seen[word] = lineno
        vec = [0.0] * len(DIMS)
        if feats and feats[0].startswith("as="):
            vec = own_copy(copy_of(feats.pop(0)[3:], rows, lineno))
        for f in feats:
            name, _, val = f.partition("=")
            if name not in DIMS:
                raise SystemExit(f"spec line {lineno}: unknown feature {name!r}")
            vec[DIMS.index(name)] = float(val) if val else 1.0
        if not any(vec):
            raise SystemExit(f"spec line {lineno}: {word!r} has no features")
        rows.append((word, vec))
    return rows


def fmt(v):
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


HEADER = """\
# attnviz embeddings: small hand-made vectors that a teacher can explain.
# GloVe text format: a word, then 16 numbers. Generated by
# assets/gen_embeddings.py from readable per-word feature specs; edit the
# specs there and re-run it rather than editing this file.
# Each dimension is a feature (0 = does not apply, about 0.2-1.5 = applies).
# The 16 dimensions come in 4 groups of 4, one group per attention head:
#   grammar: noun verb adj func | who/where/when/movement: person place time
#   motion | topics: transport finance sport nature | feeling food animal plural.
# Example: train and station are both transport nouns, so their dot product
# is large and "train" attends to "station".
"""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = os.path.join(here, "embeddings.txt")
    rows = parse_spec(SPEC)
    with open(out, "w", encoding="ascii", newline="\n") as f:
        f.write(HEADER)
        f.write("# dims: " + " ".join(DIMS) + "\n")
        for word, vec in rows:
            f.write(word + " " + " ".join(fmt(v) for v in vec) + "\n")
    print(f"wrote {out}: {len(rows)} words, {len(DIMS)} dims", file=sys.stderr)


if __name__ == "__main__":
    main()
