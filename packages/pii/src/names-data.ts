/**
 * Word lists of the name and address heuristics. Given names are common ones across English,
 * German, French, Spanish, Italian, Dutch and Portuguese, minus those that are also everyday
 * words or places in capitalised text (Will, May, Mark, Grant, Jordan, Georgia, Paris…), which
 * would cost precision in headings. Compiled by hand for this package.
 */
const words = (s: string) => new Set(s.trim().split(/\s+/));

export const GIVEN_NAMES = words(`
Aaron Abigail Adam Adrian Adriana Agnes Aidan Aisha Alan Albert Alberto Alejandro Alessandra Alessandro Alessia Alex Alexander
Alexandra Alexandre Alexis Alfonso Alfred Ali Alice Alicia Alina Alison Amanda Amelia Amélie Ana Anastasia Andrea Andreas Andrew
Andrés Andrzej Angela Angelika Angelo Anita Anja Anke Ann Anna Anne Annette Annika Anthony Antoine Antonia Antonio Ariane Arnaud
Arthur Astrid Aurélie Ava Barbara Beatrice Beatriz Ben Benedikt Benjamin Benoît Bernard Bernd Bert Bettina Bianca Birgit Bram
Brandon Brian Brigitte Bruno Caitlin Camila Camille Carina Carl Carla Carlo Carlos Carmen Carol Caroline Carolina Casper Catarina
Catherine Cecilia Cédric Celia Charles Charlie Charlotte Chiara Chloé Chloe Chris Christian Christina Christine Christoph Christopher
Claire Clara Claudia Claudio Clément Colin Conor Constanze Cornelia Craig Cristina Daan Dagmar Daniel Daniela Daniele Danielle
Daphne David Davide Debora Deborah Denis Dennis Diana Diego Dieter Dimitri Dirk Dominik Dominique Donna Doris Dorothea Douglas
Edgar Eduardo Edward Elena Eleonora Eliana Elias Elisa Elisabeth Elizabeth Ella Ellen Elena Elke Ellie Eloise Emil Emilia Emily
Emma Emmanuel Enrico Enrique Eric Erik Erika Ernesto Esther Ethan Eva Evelyn Fabian Fabio Fabienne Federica Federico Felipe
Felix Fernanda Fernando Filip Filippo Finn Fiona Florian Floor Francesca Francesco Francisco Franco François Françoise Franziska
Frederik Friedrich Gabriel Gabriela Gabriele Gabrielle Gareth Gary Gemma Georg George Gérard Gerhard Gianluca Gianni Gilles
Giorgia Giorgio Giovanna Giovanni Gisela Giulia Giulio Giuseppe Gonzalo Gordon Grace Gregor Gregory Greta Guido Guillaume
Gustavo Hannah Hanna Hans Harald Harry Heike Heinrich Heinz Helen Helena Helga Helmut Henri Henrik Henry Herbert Hilde Hugo
Ian Ignacio Ilse Inês Ines Ingrid Irene Isabel Isabella Isabelle Jacob Jacques Jaime James Jan Jana Jane Janet Janine Jannik
Jasmin Jason Javier Jean Jeanne Jeffrey Jennifer Jens Jeroen Jessica Joana Joanna João Joaquín Jochen Joel Johan Johann Johanna
Johannes John Jonas Jonathan Jordi Jorge José Josef Joseph Josephine Joshua Juan Judith Julia Julian Juliana Julie Julien Julius
Jürgen Justin Karen Karin Karl Karla Katarina Katharina Kathrin Katie Katrin Kees Kelly Kenneth Kerstin Kevin Kim Klaus Kristina
Lara Laura Laurent Lea Léa Leah Lena Leo Léo Leon Leonardo Leonie Lisa Lorenzo Louis Louise Luc Luca Lucas Lucia Lucía Lucie
Ludwig Luis Luisa Luiz Lukas Luke Lydia Magdalena Maja Manfred Manon Manuel Manuela Marc Marcel Marco Marcos Margaret Margarethe
Maria María Mariana Marie Marina Mario Marion Marius Marta Martha Martin Martina Mateo Mathias Mathieu Matilde Matteo Matthew
Matthias Mattia Maurice Max Maxime Maximilian Melanie Mia Michael Michaela Michel Michele Michelle Miguel Mila Milan Mirjam
Miriam Monica Monika Nadia Nadine Natalia Natalie Nathalie Nicola Nicolas Nicole Niels Nikolai Nils Nina Noah Noor Nora Norbert
Oliver Olivia Olga Oscar Óscar Otto Pablo Paola Pascal Patricia Patrick Paul Paula Paulo Pedro Peter Petra Philipp Philippe
Pierre Pieter Pietro Rachel Rafael Raffaele Raphael Raquel Rebecca Regina Reinhard Renate Renée René Ricardo Richard Rita
Robert Roberta Roberto Robin Rodrigo Roland Romain Ronald Rosa Rudolf Ruth Ryan Sabine Sabrina Samantha Samuel Sandra Sara
Sarah Sebastian Sébastien Sergio Silvia Simon Simona Simone Sofia Sofía Sophia Sophie Stefan Stefanie Stefano Steffen Stephan
Stephanie Stephen Steven Susanne Svenja Sven Sylvie Tamara Tanja Teresa Thérèse Thiago Thomas Tim Timo Tobias Tom Tomás Tommaso
Torsten Ulrich Ulrike Ursula Uwe Valentina Valentin Valeria Vanessa Vera Veronica Veronika Victor Victoria Vincent Vincenzo
Virginie Walter Werner Willem Wolfgang Xavier Yannick Yvonne Zoe Zoé
`);

/** Titles before a name; the title itself is kept, the name after it redacted. */
export const HONORIFICS = words(`
Mr Mrs Ms Miss Mx Dr Prof Sir Dame Lady Lord Herr Frau Hr Fr Ing Mag Mme Mlle M Sr Sra Srta Sig Dott Dhr Mevr Mw
Signor Signora Señor Señora Senhor Senhora Monsieur Madame Mademoiselle
`);

/** Lower-case words between the parts of a name (von, van der, de la, …). */
export const NAME_PARTICLES = words(`von van der den de la le da di del della dos das du ten ter y e bin al el zu vom`);

/**
 * Capitalised words that end a name (they start places, organisations, headings): a given name
 * followed by one of these is not a person ("Victoria Station", "Charlotte Street").
 */
export const NOT_NAME = words(`
The A An And Or Of For In On At To With By From As Is Are Was Be It This That These Those Our Your Their Its My We You They He She
Der Die Das Und Oder Im Am Zum Zur Mit Von Für Auf Ist Le La Les Et Ou Du Des Un Une En Au Aux Pour Sur Est El Los Las Y O Del Con
Para Por Il Lo Gli I Di Da Con Per Su Het Een En Van Voor Op Met De Te Os As Do Da Em Com
Street St Road Rd Avenue Ave Boulevard Blvd Lane Drive Way Place Square Park Station Airport Beach River Lake Bay Island Mountain
Hill Valley County City Town Village Hall Center Centre Tower Bridge Gate Garden Gardens Church Cathedral Museum Gallery Theatre
Theater Hotel Hospital Clinic School College University Institute Academy Library Stadium Arena Market Mall Court Building House
Inc Ltd LLC GmbH AG SA SAS SRL BV NV Corp Corporation Company Co Group Holding Holdings Foundation Trust Bank Partners Associates
Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August September October
November December Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag Januar Februar März Mai Juni Juli Oktober Dezember
Tech Labs Lab Studio Studios Media News Press Online Software Systems Solutions Services Network Cloud Digital Global International
North South East West Central Upper Lower New Old Great Little Royal National State Federal Saint Santa San Sankt
Straße Strasse Platz Weg Allee Rue Calle Via Piazza Rua Plaza Avenida
`);

/** Labels whose value is a person's name. Matched lower case at the end of the text before the name. */
export const NAME_LABELS = [
  'name', 'full name', 'contact', 'contact person', 'author', 'written by', 'posted by', 'signed', 'signed by', 'attn', 'attention',
  'ansprechpartner', 'ansprechpartnerin', 'kontakt', 'kontaktperson', 'vertreten durch', 'geschäftsführer', 'geschäftsführerin',
  'inhaber', 'inhaberin', 'verantwortlich', 'autor', 'autorin', 'nom', 'prénom', 'auteur', 'contact', 'responsable', 'gérant',
  'nombre', 'nombre completo', 'contacto', 'autora', 'nome', 'nome completo', 'autore', 'referente', 'titolare', 'naam', 'contactpersoon',
  'auteur', 'patient', 'patientin', 'employee', 'mitarbeiter', 'mitarbeiterin', 'kunde', 'kundin', 'customer', 'cliente', 'client',
  'recipient', 'empfänger', 'destinataire', 'destinatario', 'sender', 'absender', 'expéditeur', 'remitente', 'ceo', 'cto', 'founder',
];

/** Closings after which the next line is a signature. */
export const CLOSINGS = [
  'regards', 'best regards', 'kind regards', 'best', 'sincerely', 'yours sincerely', 'cheers', 'thanks', 'thank you',
  'mit freundlichen grüßen', 'mit freundlichen grüssen', 'viele grüße', 'beste grüße', 'liebe grüße', 'cordialement',
  'bien cordialement', 'salutations', 'saludos', 'un saludo', 'atentamente', 'cordiali saluti', 'distinti saluti', 'saluti',
  'met vriendelijke groet', 'met vriendelijke groeten', 'groeten', 'atenciosamente', 'abraços', 'obrigado', 'obrigada',
];

/** Greetings before a first name (aggressive mode). */
export const GREETINGS = words(`Hi Hello Hey Dear Hallo Liebe Lieber Bonjour Cher Chère Hola Estimado Estimada Querido Querida Ciao Caro Cara Gentile Beste Olá Prezado Prezada`);

/** Street-type words that end a street name (English, German and Dutch compounds). */
export const EN_STREET_TYPES = words(`
Street St Avenue Ave Road Rd Boulevard Blvd Lane Ln Drive Dr Court Ct Way Place Pl Terrace Ter Parkway Pkwy Highway Hwy Circle Cir
Square Sq Crescent Close Grove Gardens Row Mews Alley Trail Plaza Broadway Walk Parade Esplanade
`);
export const DE_NL_STREET_SUFFIX = /(?:straße|strasse|str|weg|platz|allee|gasse|ring|damm|ufer|chaussee|steig|pfad|promenade|straat|gracht|laan|plein|kade|singel|dijk|steeg)$/i;
export const DE_STREET_WORDS = words(`Straße Strasse Str Weg Platz Allee Gasse Ring Damm Ufer Chaussee Steig Pfad Promenade Straat Laan Plein Kade Gracht Singel`);
/** French street types (lower case as written), and those also common as ordinary words. */
export const FR_STREET_TYPES = words(`rue avenue av boulevard bd place pl chemin allée impasse quai route cours square passage voie`);
/** Spanish, Italian and Portuguese street types (capitalised as written before the name). */
export const ROMANCE_STREET_TYPES = words(`Calle C Avenida Avda Av Plaza Pza Paseo Carrer Camino Ronda Travesía Rua Travessa Alameda Praça Via Viale Piazza Piazzale Corso Largo Vicolo Strada Contrada`);
export const ROMANCE_PARTICLES = words(`de del la las los el dos das do da di dei delle della degli dello d l`);

export const US_STATES = words(`
AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT
VT VA WA WV WI WY DC PR
`);
