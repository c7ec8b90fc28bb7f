"""Security alerts: attack category, severity, and whether it was blocked or an attacker got in."""

from __future__ import annotations

from common import C, fill


def A(cat, sev, text, blocked=False, login=False):
    """An alert core; ``sev`` 0 low / 1 medium / 2 high, None when debatable (not asked)."""
    return C(text, cat=cat, sev=sev, blocked=blocked, login=login)


CORES = [
    A("brute_force", 0, "{n} failed SSH logins for root on {host} from {ip} within 10 minutes. fail2ban blocked the source IP automatically and no login succeeded.", blocked=True),
    A("brute_force", 1, "Password spraying detected: 40 different accounts each saw one failed login from {ip} in 5 minutes. No account was accessed so far and the IP is not blocked."),
    A("brute_force", 2, "After {n} failed attempts, a successful VPN login for {user} came from {ip}, an address never seen before for this user.", login=True),
    A("brute_force", 0, "Account {user} was locked after 10 wrong passwords from {ip2}. The lockout policy worked and no login succeeded.", blocked=True),
    A("brute_force", 1, "Failed logins to the admin portal from a single address have continued for three hours; nothing has been blocked yet and no login has succeeded."),
    A("brute_force", 2, "Credential stuffing against the customer login page: {n} attempts, 12 of which succeeded, and those sessions are still active.", login=True),
    A("malware", 0, "Antivirus quarantined a trojan in an email attachment on {host} before it was opened.", blocked=True),
    A("malware", 2, "EDR on {host}: an unknown process is encrypting files on the shared drive and renaming them to *.locked. It is still running."),
    A("malware", 1, "A user downloaded a file flagged as potentially unwanted software (a browser toolbar). It has not been run; needs a look."),
    A("malware", 2, "Word on {host} spawned PowerShell, which downloaded and ran a payload from {ip}; the host now beacons to that IP every 60 seconds."),
    A("malware", 0, "The mail gateway stripped a macro-enabled attachment from an inbound message, so nobody received the file.", blocked=True),
    A("malware", 1, "A new scheduled task named 'updater' on {host} runs an unsigned executable from the temp folder. Not confirmed malicious yet."),
    A("phishing", 0, "{user} reported an email impersonating the CEO asking for gift cards. Nobody replied and no other copies were found."),
    A("phishing", 2, "{n} employees received a fake 'password expiry' email linking to a look-alike login page, and three of them typed in their passwords.", login=None),
    A("phishing", 0, "The email filter blocked a campaign of 200 messages spoofing our bank's domain before delivery.", blocked=True),
    A("phishing", 1, "An 'overdue invoice' email with a link to a fake document portal reached 15 inboxes; we don't know yet whether anyone clicked."),
    A("phishing", 1, "Finance got an email from a look-alike supplier domain asking to change the bank details for the next payment. Awaiting verification."),
    A("phishing", 2, "After a phishing call an employee approved an MFA push they didn't start, and the attacker signed in to their mailbox from {ip}.", login=True),
    A("data_exfiltration", 2, "{host} has uploaded 38 GB to an unknown cloud storage bucket in the last hour, far outside its normal pattern. The transfer is still running."),
    A("data_exfiltration", 0, "DLP blocked an attempt to email a spreadsheet with 2,000 customer card numbers to a personal Gmail address.", blocked=True),
    A("data_exfiltration", None, "A departing employee copied the entire sales folder to a USB stick yesterday evening."),
    A("data_exfiltration", 1, "{host} is sending thousands of long, random-looking subdomain queries to one external domain. Possible DNS tunnelling, not confirmed."),
    A("data_exfiltration", 2, "A full export of the customer table was downloaded by a service account at 3am from {ip}, an address outside our network.", login=None),
    A("data_exfiltration", 0, "An employee tried to upload source code to a public paste site; the web proxy blocked the upload.", blocked=True),
    A("misconfiguration", 1, "A storage bucket with internal build logs was made public by a recent change. No outside access has been seen yet."),
    A("misconfiguration", 0, "The TLS certificate for the public website expires in 12 days. Renewal is scheduled."),
    A("misconfiguration", 2, "The production database is reachable from the internet on port 5432 and still uses the default admin password.", login=None),
    A("misconfiguration", 1, "A firewall rule allowing RDP from any address was added to {host}; the change has not been reviewed yet."),
    A("misconfiguration", None, "Audit logging was switched off on the staging cluster by an automation job."),
    A("misconfiguration", 0, "A test server only reachable from the internal network runs an outdated web framework with known low-risk issues."),
]  # fmt: skip

SOURCES = ["EDR", "SIEM", "IDS", "mail-gateway", "DLP", "cloud-audit", "auth-service"]
ANALYST_LINES = ["on it", "who's on call tonight?", "pulling the logs now", "ack"]


def make(rng, core):
    """A security state: alert JSON, log record, plain alert text, or analyst chat."""
    text = fill(rng, core["text"])
    stamp = fill(rng, "2024-{mm}-{dd}T{hh}:{mi}:00Z", {
        "mm": f"{rng.randint(1, 12):02d}", "dd": f"{rng.randint(1, 28):02d}",
        "hh": f"{rng.randint(0, 23):02d}", "mi": f"{rng.randint(0, 59):02d}"})  # fmt: skip
    form = rng.random()
    if form < 0.4:
        state = {"alert_id": fill(rng, "SEC-{order}"), "source": rng.choice(SOURCES), "time": stamp,
                 "summary": text}  # fmt: skip
        if rng.random() < 0.4:
            state["status"] = "new"
    elif form < 0.6:
        state = {"timestamp": stamp, "service": rng.choice(SOURCES), "message": text}
    elif form < 0.85:
        state = rng.choice(["[ALERT] ", "Security alert: ", "", f"{stamp} "]) + text
    else:
        state = [
            f"soc-bot: new alert - {text}",
            f"{fill(rng, '{first}')}: {rng.choice(ANALYST_LINES)}",
        ]
    return state, dict(core)


FAMILIES = [
    {
        "type": "choice",
        "key": "cat",
        "qids": ["category", "attack_type", "alert_type", "threat", "class"],
        "instructions": [
            "What type of security event is this?",
            "Classify the alert.",
            "Which threat category fits this alert best?",
            "Categorise the security incident.",
            "What kind of attack or issue does the alert describe?",
        ],
        "options": {
            "brute_force": ["many password guesses against logins", "password guessing, spraying or credential stuffing"],
            "malware": ["malicious software on a machine", "viruses, trojans, ransomware, suspicious executables"],
            "phishing": ["deceptive emails or calls that trick people", "fraudulent messages impersonating someone"],
            "data_exfiltration": ["data leaving the organisation", "theft or unauthorised transfer of data"],
            "misconfiguration": ["an insecure setting or exposed system", "unsafe configuration, no attacker activity"],
        },
    },
    {
        "type": "score",
        "key": "sev",
        "qids": ["severity", "sev", "risk", "impact"],
        "instructions": [
            "How severe is this alert?",
            "Rate the severity of the security event.",
            "What severity should the SOC assign?",
            "How serious is the incident?",
        ],
        "styles": [
            ("low: blocked or no impact", "medium: suspicious, needs investigation", "high: confirmed compromise or damage in progress"),
            ("low", "medium", "high"),
            ("informational - handled or minor", "warning - possible threat, unconfirmed", "critical - active attack or breach"),
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["blocked"],
        "qids": ["blocked", "prevented", "auto_contained"],
        "instructions": [
            "The activity was stopped automatically by a security control.",
            "Was the threat blocked before it could do harm?",
            "A security tool prevented the action.",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["login"],
        "qids": ["login_success", "attacker_in", "account_compromised"],
        "instructions": [
            "An unauthorised party successfully signed in to an account.",
            "Did an attacker manage to log in?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: None if x["sev"] is None else x["sev"] == 2,
        "qids": ["page_oncall", "escalate", "act_now"],
        "instructions": [
            "This alert needs immediate incident response.",
            "Should the on-call responder be paged right now?",
        ],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "phishing",
        "qids": ["phishing", "is_phish"],
        "instructions": ["The alert is about a phishing attempt.", "Is this a phishing incident?"],
    },
    {
        "type": "noul",
        "test": lambda x: x["cat"] == "malware",
        "qids": ["malware", "is_malware"],
        "instructions": ["The alert involves malicious software.", "Is malware involved?"],
    },
]  # fmt: skip

DOMAIN = {
    "name": "security_alerts",
    "prefix": "security",
    "cores": CORES,
    "families": FAMILIES,
    "make": make,
    "states": 180,
}
